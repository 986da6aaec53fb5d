import { startService } from '@switchyard/service';
import { edgeDefinition } from './edge.definition.js';

await startService(edgeDefinition);
