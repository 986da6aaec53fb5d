import { startService } from '@switchyard/service';
import { chatDefinition } from './chat.definition.js';

await startService(chatDefinition);
