import { Catch, type ArgumentsHost } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { ApiExceptionFilter } from '@switchyard/service';
import { type FastifyReply } from 'fastify';

/** The shared error rendering, plus the Bearer challenge a 401 owes the client. */
@Catch()
export class AdminExceptionFilter extends ApiExceptionFilter {
  override catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() === 'http' && exception instanceof ApiError && exception.status === 401) {
      const reply = host.switchToHttp().getResponse<FastifyReply>();
      void reply.header('www-authenticate', 'Bearer');
    }
    super.catch(exception, host);
  }
}
