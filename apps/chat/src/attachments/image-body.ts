import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ApiError, IMAGE_LIMITS, imageTooLargeMessage } from '@switchyard/contracts';

/**
 * Reads an uploaded image's body (`POST /api/attachments`) as bytes, up to the image limit
 * rather than the API's JSON limit; anything longer is `image_too_large`, by its
 * `Content-Length` before reading or by counting. Every `image/*` type is read, so the
 * upload can say which types it takes (`image_type_not_supported`) instead of the
 * framework's "must be application/json".
 */
export function acceptImageBodies(app: NestFastifyApplication): void {
  const limit = IMAGE_LIMITS.bytesPerImage;
  app
    .getHttpAdapter()
    .getInstance()
    .addContentTypeParser(/^image\//, (request, payload, done) => {
      if (Number(request.headers['content-length'] ?? 0) > limit) {
        done(new ApiError('image_too_large', imageTooLargeMessage()), undefined);
        return;
      }
      const chunks: Buffer[] = [];
      let length = 0;
      let finished = false;
      const finish = (error: Error | null, body?: Buffer) => {
        if (finished) return;
        finished = true;
        payload.removeAllListeners('data');
        done(error, body);
      };
      payload.on('data', (chunk: Buffer) => {
        length += chunk.length;
        if (length > limit) finish(new ApiError('image_too_large', imageTooLargeMessage()));
        else chunks.push(chunk);
      });
      payload.on('end', () => finish(null, Buffer.concat(chunks)));
      payload.on('error', (error) => finish(error));
    });
}
