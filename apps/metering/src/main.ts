import { startService } from '@switchyard/service';
import { meteringDefinition } from './metering.definition.js';

await startService(meteringDefinition);
