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
export {
  RedisConfigurationError,
  atEndOfTurn,
  createIoRedis,
  queuePrefixFor,
  redisConnectionOptions,
  type AnyRedis,
  type RedisConnectionOptions,
  type RedisEndpoint,
  type RedisTopology,
} from './redis-connection.js';
export { InvalidPayloadError, payloadValidator, validatePayload } from './payload.js';
export { ReplicatedWrites, WriteNotReplicatedError } from './replicated-writes.js';
export { TurnBatchedScript } from './turn-batched-script.js';
export {
  NamespacedRedisClient,
  NamespacedRedisServer,
  busConnectionOf,
  redisOf,
  type BusConnection,
} from './transport.js';
export {
  dispatchJob,
  InjectTypedQueue,
  openTypedQueue,
  type JobHandlers,
  type QueuedJob,
  type TypedQueue,
} from './typed-queue.js';
export { UsageQueue, type SingleRecordJob, type UsageQueueOptions } from './usage-queue.js';
