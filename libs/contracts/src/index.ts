export * from './errors.js';
export * from './events.js';
export * from './messages.js';
export * from './openai.js';
export * from './queues.js';
export * from './routing.js';
export * from './http-limits.js';
export * from './storable.js';
