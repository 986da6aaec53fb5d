import { startService } from '@switchyard/service';
import { routerDefinition } from './router.definition.js';

await startService(routerDefinition);
