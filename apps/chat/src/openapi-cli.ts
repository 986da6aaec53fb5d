import { generateSecretKeySpec } from '@switchyard/security';
import { writeOpenApiDocument } from '@switchyard/service/openapi';
import { chatDefinition } from './chat.definition.js';
import { buildOpenApiDocument } from './openapi.js';

// The chat API's OpenAPI document, for the web app's generated client.
await writeOpenApiDocument(chatDefinition, buildOpenApiDocument, {
  SECRET_KEYS: generateSecretKeySpec('openapi'),
});
