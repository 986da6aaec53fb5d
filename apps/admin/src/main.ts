import { startService } from '@switchyard/service';
import { adminService } from './admin.service.js';

await startService(adminService);
