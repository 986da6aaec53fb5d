import { startService } from '@switchyard/service';
import { webService } from './web.service.js';

await startService(webService);
