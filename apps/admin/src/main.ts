import { startService } from '@switchyard/service';
import { adminDefinition } from './admin.definition.js';

await startService(adminDefinition);
