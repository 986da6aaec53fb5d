import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/** The chat API described at `/api/docs` (browsable) and `/api/docs-json`. */
export function serveOpenApi(app: NestFastifyApplication): void {
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
  const document = SwaggerModule.createDocument(app, config);
  SwaggerModule.setup('api/docs', app, document, { jsonDocumentUrl: 'api/docs-json' });
}
