import { type ServedFrontApi } from '../front-api.js';
import { openAIErrorReply } from '../openai-shape.js';
import { StoredResponsesController } from './stored-responses.controller.js';

// The follow-ups of OpenAI's stored Responses: sent to the channel and key that created the
// Response, not routed (stored-responses.controller.ts; docs/providers.md, "Stored
// responses").

export const storedResponses: ServedFrontApi = {
  kind: 'served',
  name: 'responses.stored',
  routes: [
    { method: 'GET', path: '/v1/responses/:id' },
    { method: 'DELETE', path: '/v1/responses/:id' },
    { method: 'POST', path: '/v1/responses/:id/cancel' },
    { method: 'GET', path: '/v1/responses/:id/input_items' },
  ],
  controller: StoredResponsesController,
  errorReply: openAIErrorReply,
};
