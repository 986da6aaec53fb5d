export {
  ApiExceptionFilter,
  apiValidationPipe,
  refusedRequest,
  toApiError,
  type RefusedRequest,
} from './api-errors.js';
export {
  createService,
  startService,
  type RunningService,
  type ServiceDefinition,
} from './start-service.js';
