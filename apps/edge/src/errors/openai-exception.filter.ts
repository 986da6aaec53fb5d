import { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import { GatewayError } from '@switchyard/contracts';
import { refusedRequest, toApiError } from '@switchyard/service';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { isAdminApi } from '../admin-proxy/admin-proxy.module.js';
import { errorReplyAt } from '../front-apis/registry.js';

/** Where a request was sent, as an error's words and shape need it. */
interface RequestTarget {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/** Every failure on the edge, with a stable code (rendered in its front API's shape). */
export function toGatewayError(exception: unknown, request?: RequestTarget): GatewayError {
  if (exception instanceof GatewayError) return exception;
  const refused = refusedRequest(exception);
  if (refused?.kind === 'not_found') {
    const where = request ? `${request.method} ${request.url.split('?')[0]}` : 'this URL';
    return new GatewayError(
      'unknown_url',
      `Unknown request URL: ${where}. Please check the URL for typos.`,
    );
  }
  if (refused?.kind === 'validation_failed')
    return new GatewayError('invalid_request', refused.message);
  if (refused?.kind === 'payload_too_large')
    return new GatewayError('request_too_large', refused.message);
  if (refused?.kind === 'invalid_json') return new GatewayError('invalid_json', refused.message);
  if (refused?.kind === 'unsupported_media_type')
    return new GatewayError('unsupported_media_type', refused.message);
  if (exception instanceof HttpException && exception.getStatus() < 500) {
    return new GatewayError('invalid_request', exception.message);
  }
  return new GatewayError(
    'internal_error',
    'The gateway failed to process the request; it has been logged.',
  );
}

const logger = new Logger('Edge');

/** An unexpected failure is logged with what it says, which its client is never told. */
function logUnexpected(code: string, exception: unknown): void {
  if (code === 'internal_error')
    logger.error(exception instanceof Error ? exception : String(exception));
}

/**
 * Answers a failed request, from Nest's filter or from Fastify's error handler alike: on
 * `/v1` in the shape of the front API the URL belongs to (OpenAI's, Anthropic's on
 * `/v1/messages`; front-apis/registry.ts), in the admin API's own shape on the `/api` it
 * passes through.
 */
export function replyWithError(
  exception: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  if (isAdminApi(request.url) && !reply.sent && !reply.raw.headersSent) {
    const refused = toApiError(exception);
    logUnexpected(refused.code, exception);
    void reply.status(refused.status).send(refused.toBody());
    return;
  }
  const error = toGatewayError(exception, request);
  logUnexpected(error.code, exception);
  if (reply.sent || reply.raw.headersSent) {
    reply.raw.destroy();
    return;
  }
  const { body, contentType } = errorReplyAt(request.url, error, request.headers);
  void reply.headers(error.headers());
  if (contentType) void reply.header('content-type', contentType);
  void reply.status(error.status).send(body);
}

/**
 * Answers a failed request of the front door (proxy/front-door.ts) on Node's response, in
 * the shape of the front API its URL belongs to, as `replyWithError` does on Fastify's.
 */
export function answerWithError(
  response: ServerResponse,
  request: RequestTarget,
  exception: unknown,
): void {
  const error = toGatewayError(exception, request);
  logUnexpected(error.code, exception);
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const { body, contentType } = errorReplyAt(request.url, error, request.headers);
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  for (const [name, value] of Object.entries(error.headers())) response.setHeader(name, value);
  response.setHeader('content-type', contentType ?? 'application/json; charset=utf-8');
  response.setHeader('content-length', bytes.length);
  response.statusCode = error.status;
  response.end(bytes);
}

@Catch()
export class OpenAIExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    replyWithError(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }
}
