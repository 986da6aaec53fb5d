import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';

export const OPENAPI_UI_PATH = 'api/docs';
export const OPENAPI_JSON_PATH = 'api/docs-json';

export function buildOpenApiDocument(app: NestFastifyApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Switchyard gateway admin API')
    .setDescription(
      [
        'Administrators, channels and their upstream keys, gateway tokens, model prices, usage and the audit log.',
        'Reached through the edge at `/api/*`. Log in with `POST /api/auth/login` and send `Authorization: Bearer <token>`.',
        'Roles: `owner` (everything, including administrators), `admin` (channels, tokens, prices, usage, tests), `viewer` (read only).',
        'Every failure is `{"error": {"code", "message", "fields"?}}` with a stable `code`. Money is an integer of micro-dollars (1 USD = 1,000,000).',
        'Lists take `page` and `pageSize` (at most 100) and answer `{items, total}`.',
      ].join('\n\n'),
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'A session token (`sess-…`)' })
    .build();
  const document = SwaggerModule.createDocument(app, config);
  // Probes and metrics (`/healthz`, `/readyz`, `/metrics`) are operations, not the admin API.
  document.paths = Object.fromEntries(
    Object.entries(document.paths).filter(([path]) => path.startsWith('/api/')),
  );
  return document;
}

/** Swagger UI at `/api/docs`, the document at `/api/docs-json`. */
export function serveOpenApi(app: NestFastifyApplication): void {
  SwaggerModule.setup(OPENAPI_UI_PATH, app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    raw: ['json'],
  });
}
