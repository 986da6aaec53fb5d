export {
  ApiExceptionFilter,
  apiValidationPipe,
  INT4_MAX,
  refusedRequest,
  toApiError,
  type RefusedRequest,
} from './api-errors.js';
export {
  createService,
  startService,
  type FinishedRequest,
  type FrontDoor,
  type FrontDoorHooks,
  type RunningService,
  type ServiceDefinition,
} from './start-service.js';
export {
  assertSaneJson,
  MAX_JSON_ARRAY_ITEMS,
  MAX_JSON_DEPTH,
  MAX_JSON_OBJECT_KEYS,
  parseSaneJson,
  unstorableText,
} from './json-body.js';
export { Optional } from './optional.js';
export { skipTake, wholeList, type Page, type PageSizes, type PageWindow } from './pagination.js';
export {
  contentSecurityPolicy,
  IMMUTABLE,
  REVALIDATE,
  cacheControlFor,
  registerStaticSite,
  type StaticSiteOptions,
} from './static-site.js';
export { isHostAndPort, isWebProtocol } from './forwarded.js';
export { bodyLeftUnread, drainUnreadBodyOf } from './unread-body.js';
