import { startService } from '@switchyard/service';
import { meteringService } from './metering.service.js';

await startService(meteringService);
