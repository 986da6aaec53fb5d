// Error codes and their statuses are part of the wire contract, owned by libs/domain (the
// browsers render them too).
export {
  API_ERRORS,
  ApiError,
  GATEWAY_ERRORS,
  GatewayError,
  type ApiErrorBody,
  type ApiErrorCode,
  type ApiErrorOptions,
  type GatewayErrorCode,
  type OpenAIErrorBody,
} from '@switchyard/domain';
export * from './events.js';
export * from './messages.js';
export * from './openai.js';
export * from './queues.js';
export * from './routing.js';
export * from './http-limits.js';
export * from './storable.js';
