import { anthropicErrorReply, isAnthropicCaller } from '../anthropic-shape.js';
import { type ServedFrontApi } from '../front-api.js';
import { openAIErrorReply } from '../openai-shape.js';
import { ModelsController } from './models.controller.js';

// The model list: the models a token may use and some channel serves, answered by the edge
// from its routing snapshot, never forwarded; in OpenAI's shape, or Anthropic's for its SDKs.

export const models: ServedFrontApi = {
  kind: 'served',
  name: 'models',
  routes: [
    { method: 'GET', path: '/v1/models' },
    { method: 'GET', path: '/v1/models/:model' },
  ],
  controller: ModelsController,
  errorReply: (error, headers) =>
    isAnthropicCaller(headers) ? anthropicErrorReply(error) : openAIErrorReply(error),
};
