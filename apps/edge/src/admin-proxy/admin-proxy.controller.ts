import { All, Controller, Logger, Req, Res, type OnApplicationShutdown } from '@nestjs/common';
import { type ApiErrorBody } from '@switchyard/contracts';
import { REQUEST_ID_HEADER } from '@switchyard/observability';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { Pool } from 'undici';

// `/api/*` belongs to the admin service; the edge passes it through unchanged, adding the
// client's address to X-Forwarded-For so throttling and the audit log see the real client.

const HOP_BY_HOP = new Set([
  'connection',
  // Answered here (Node sends the 100 Continue); the pool refuses to send it on.
  'expect',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

function forwardedFor(request: FastifyRequest): string {
  const incoming = request.headers['x-forwarded-for'];
  const chain = Array.isArray(incoming) ? incoming.join(', ') : incoming;
  const peer = request.socket.remoteAddress ?? request.ip;
  // Only a trusted proxy's chain is kept (request.ips is set only for those).
  return request.ips && request.ips.length > 1 && chain ? `${chain}, ${peer}` : peer;
}

@Controller('api')
export class AdminProxyController implements OnApplicationShutdown {
  private readonly logger = new Logger('AdminProxy');

  constructor(private readonly admin: Pool) {}

  @All(['', '*'])
  async forward(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name) || name === 'x-forwarded-for') continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    headers['x-forwarded-for'] = forwardedFor(request);
    headers[REQUEST_ID_HEADER] = request.id;
    const body = Buffer.isBuffer(request.body) ? request.body : undefined;
    try {
      const answer = await this.admin.request({
        path: request.url,
        method: request.method,
        headers,
        body,
      });
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) void reply.header(name, value);
      }
      await reply.status(answer.statusCode).send(answer.body);
    } catch (error) {
      this.logger.warn(`admin service unreachable: ${(error as Error).message}`);
      const unavailable: ApiErrorBody = {
        error: {
          code: 'bad_gateway',
          message: 'The admin service is not reachable; check that it is running.',
        },
      };
      await reply.status(502).send(unavailable);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.admin.close();
  }
}
