import { type NestFastifyApplication } from '@nestjs/platform-fastify';

/**
 * Bodies reach handlers as the bytes the client sent: `/v1` forwards them unchanged
 * (unless a channel renames the model) and parses them itself, with OpenAI-shaped errors;
 * `/api` passes them to the admin service as they are. Any content type is read, as the
 * OpenAI API does (curl's default form type included).
 */
export function acceptRawBodies(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) =>
    done(null, body),
  );
}
