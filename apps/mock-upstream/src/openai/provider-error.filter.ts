import { ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import { toApiError } from '@switchyard/service';
import { type FastifyReply } from 'fastify';
import { providerError } from './openai-error.js';

/** Every failure of the mock looks like a provider's: OpenAI's error body. */
@Catch()
export class ProviderErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const error = toApiError(exception);
    void host
      .switchToHttp()
      .getResponse<FastifyReply>()
      .status(error.status)
      .send(providerError(error.status, { message: error.message, code: error.code }));
  }
}
