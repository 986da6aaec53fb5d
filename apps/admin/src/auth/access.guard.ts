import { Injectable, Logger, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError } from '@switchyard/contracts';
import { type AdminRole } from '@switchyard/db';
import { type FastifyRequest } from 'fastify';
import '../common/request-state.js';
import { BEFORE_PASSWORD_CHANGE, PUBLIC_ROUTE, ROUTE_ROLES } from './access.decorators.js';
import { AuthService } from './auth.service.js';

/** Probes at the root, served by the shared libs; never reached through the edge. */
const OPERATIONS_ROUTES = new Set(['/healthz', '/readyz']);

/**
 * Every request passes here. Default deny: a route must be `@Public()` or declare its
 * `@Roles(...)`. Then a live session is required, the forced password change is enforced,
 * and the administrator's current role (read fresh, so a demotion applies at once) must be
 * one the route allows.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  private readonly logger = new Logger('AccessGuard');

  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (OPERATIONS_ROUTES.has(request.routeOptions.url ?? '')) return true;

    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const roles = this.reflector.getAllAndOverride<AdminRole[] | undefined>(ROUTE_ROLES, targets);
    if (!roles || roles.length === 0) {
      this.logger.error({
        message: 'route declares no roles; refused',
        route: request.routeOptions.url,
      });
      throw new ApiError('forbidden', 'This route is not open to anyone');
    }

    const admin = await this.authenticate(request.headers.authorization);
    if (!admin) {
      throw new ApiError(
        'unauthenticated',
        'A valid session is required: log in at POST /api/auth/login and send Authorization: Bearer <token>',
      );
    }
    request.admin = admin;
    if (
      admin.mustChangePassword &&
      !this.reflector.getAllAndOverride<boolean>(BEFORE_PASSWORD_CHANGE, targets)
    ) {
      throw new ApiError(
        'password_change_required',
        'The password must be changed first: POST /api/auth/password',
      );
    }
    if (!roles.includes(admin.role)) {
      throw new ApiError(
        'forbidden',
        `This needs the role ${roles.join(' or ')}; your role is ${admin.role}`,
      );
    }
    return true;
  }

  private async authenticate(header: string | undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    try {
      return await this.auth.authenticate(match?.[1]);
    } catch (error) {
      if (error instanceof ApiError) throw error;
      this.logger.error({
        message: 'sessions cannot be checked',
        reason: error instanceof Error ? error.message : String(error),
      });
      throw new ApiError(
        'service_unavailable',
        'Sessions cannot be checked right now; retry shortly',
      );
    }
  }
}
