import { ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import { toApiError } from '@switchyard/service';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { anthropicError } from '../anthropic/anthropic-dialect.js';
import { cohereError } from '../rerank/cohere-dialect.js';
import { providerError } from './openai-error.js';

/**
 * Every failure of the mock looks like a provider's: Anthropic's error body on Anthropic's
 * routes (the edge passes an anthropic channel's errors on as they came, docs/providers.md),
 * Cohere's on the reranker's, OpenAI's elsewhere.
 */
@Catch()
export class ProviderErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const error = toApiError(exception);
    const http = host.switchToHttp();
    const url = http.getRequest<FastifyRequest>().url;
    const body = url.startsWith('/v1/messages')
      ? anthropicError(error.status, { message: error.message })
      : url.startsWith('/v1/rerank')
        ? cohereError(error.status, { message: error.message })
        : providerError(error.status, { message: error.message, code: error.code });
    void http.getResponse<FastifyReply>().status(error.status).send(body);
  }
}
