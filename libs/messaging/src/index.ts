export { EventBus, OnEvent, OnMessage } from './event-bus.js';
export {
  MessagingModule,
  QueueConnection,
  REDIS,
  RedisReadiness,
  createRedisClient,
  redisReady,
  type RedisClient,
} from './messaging.module.js';
export { inNamespace } from './namespace.js';
export { InvalidPayloadError, payloadValidator, validatePayload } from './payload.js';
export {
  NamespacedRedisClient,
  NamespacedRedisServer,
  busConnectionOf,
  type BusConnection,
} from './transport.js';
export { UsageQueue, type SingleRecordJob, type UsageQueueOptions } from './usage-queue.js';
