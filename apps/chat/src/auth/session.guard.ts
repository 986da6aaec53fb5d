import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError } from '@switchyard/contracts';
import { type FastifyRequest } from 'fastify';
import { AuthService } from './auth.service.js';
import { IS_PUBLIC } from './principal.js';

// Default deny: every /api route needs a session unless marked @Public(), and every
// /api/admin route needs an administrator, whatever its decorators say. Routes outside
// /api (health, readiness, metrics) are for probes on the internal port.

const API = '/api/';
const ADMIN = '/api/admin';

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export function isAdminRoute(path: string): boolean {
  return path === ADMIN || path.startsWith(`${ADMIN}/`);
}

@Injectable()
export class SessionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const route = request.routeOptions.url ?? request.url;
    if (!route.startsWith(API)) return true;
    const admin = isAdminRoute(route);
    const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic && !admin) return true;
    const principal = await this.auth.authenticate(bearerToken(request));
    if (admin && principal.role !== 'admin') {
      throw new ApiError('forbidden', 'This needs a chat administrator');
    }
    request.principal = principal;
    return true;
  }
}
