import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';

export function buildOpenApiDocument(app: NestFastifyApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Switchyard chat API')
    .setDescription(
      'Chat users, models, API key records, editions and conversations. Errors are ' +
        '{"error": {"code", "message", "fields"?}} with a stable code.',
    )
    .setVersion('1')
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      description: 'The token from /api/auth/login',
    })
    .build();
  return SwaggerModule.createDocument(app, config);
}

/** The chat API described at `/api/docs` (browsable) and `/api/docs-json`. */
export function serveOpenApi(app: NestFastifyApplication): void {
  SwaggerModule.setup('api/docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'api/docs-json',
  });
}
