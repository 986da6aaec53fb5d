import { type ServedFrontApi } from '../front-api.js';
import { geminiClaims, geminiErrorReply } from './gemini-shape.js';
import { GeminiModelsController } from './models.controller.js';

// Gemini's model list: the models a token may use and some channel serves, answered by the
// edge from its routing snapshot, never forwarded.

export const geminiModels: ServedFrontApi = {
  kind: 'served',
  name: 'gemini models',
  routes: [
    { method: 'GET', path: '/v1beta/models' },
    { method: 'GET', path: '/v1beta/models/:model' },
  ],
  controller: GeminiModelsController,
  errorReply: geminiErrorReply,
  claims: geminiClaims,
};
