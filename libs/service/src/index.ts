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
export {
  CONTENT_SECURITY_POLICY,
  IMMUTABLE,
  REVALIDATE,
  cacheControlFor,
  registerStaticSite,
  type StaticSiteOptions,
} from './static-site.js';
