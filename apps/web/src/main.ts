import { startService } from '@switchyard/service';
import { webDefinition } from './web.definition.js';

await startService(webDefinition);
