import { Catch, type ArgumentsHost } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { ApiExceptionFilter } from '@switchyard/service';
import { type FastifyReply } from 'fastify';

/** A refusal the client may retry after a delay (429 with `Retry-After`). */
export class RetryLaterError extends ApiError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('too_many_attempts', message);
  }
}

/** The shared error rendering, plus the headers some refusals owe the client. */
@Catch()
export class AdminExceptionFilter extends ApiExceptionFilter {
  override catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() === 'http') {
      const reply = host.switchToHttp().getResponse<FastifyReply>();
      if (exception instanceof RetryLaterError) {
        void reply.header('retry-after', String(exception.retryAfterSeconds));
      }
      if (exception instanceof ApiError && exception.status === 401) {
        void reply.header('www-authenticate', 'Bearer');
      }
    }
    super.catch(exception, host);
  }
}
