import { generateSecretKeySpec } from '@switchyard/security';
import { writeOpenApiDocument } from '@switchyard/service/openapi';
import { adminDefinition } from './admin.definition.js';
import { buildOpenApiDocument } from './openapi.js';

// The admin API's OpenAPI document, for the dashboard's generated client.
await writeOpenApiDocument(adminDefinition, buildOpenApiDocument, {
  SECRET_KEYS: generateSecretKeySpec('openapi'),
});
