import { startService } from '@switchyard/service';
import { chatService } from './service.js';

await startService(chatService);
