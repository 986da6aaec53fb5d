import { startService } from '@switchyard/service';
import { mockUpstreamDefinition } from './mock-upstream.definition.js';

await startService(mockUpstreamDefinition);
