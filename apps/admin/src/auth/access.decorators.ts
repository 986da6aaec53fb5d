import {
  SetMetadata,
  applyDecorators,
  createParamDecorator,
  type ExecutionContext,
} from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { AdminRole } from '@switchyard/db';
import { type FastifyRequest } from 'fastify';
import { actorOf, type Actor, type AdminPrincipal } from '../common/actor.js';
import { ApiErrorResponse } from '../common/api-docs.js';
import '../common/request-state.js';

// Who may call a route. The access guard refuses every route that declares neither
// `@Public()` nor `@Roles(...)`, so a route added without a decision is closed.

export const PUBLIC_ROUTE = 'switchyard:public';
export const ROUTE_ROLES = 'switchyard:roles';
export const BEFORE_PASSWORD_CHANGE = 'switchyard:before-password-change';

/** Every administrator's role may read the gateway's data (members may not: docs/teams.md). */
export const READERS: AdminRole[] = [AdminRole.owner, AdminRole.admin, AdminRole.viewer];
/** Anyone signed in to the dashboard: their own session and password. */
export const SIGNED_IN: AdminRole[] = [...READERS, AdminRole.member];
/** A team member's own view: only the teams they belong to (checked per route). */
export const MEMBERS: AdminRole[] = [AdminRole.member];
/** Channels, tokens, prices, usage, tests. */
export const EDITORS: AdminRole[] = [AdminRole.owner, AdminRole.admin];
/** Administrators themselves. */
export const OWNERS: AdminRole[] = [AdminRole.owner];

/** No session needed (login). */
export function Public(): MethodDecorator & ClassDecorator {
  return SetMetadata(PUBLIC_ROUTE, true);
}

/** A valid session of one of these roles is needed. */
export function Roles(...roles: AdminRole[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(ROUTE_ROLES, roles),
    ApiBearerAuth(),
    ApiUnauthorizedResponse({ type: ApiErrorResponse, description: 'No valid session' }),
    ApiForbiddenResponse({
      type: ApiErrorResponse,
      description: `Needs the role ${roles.join(' or ')}; or the password must be changed first`,
    }),
  );
}

/** Reachable while the administrator must still change the password. */
export function AllowedBeforePasswordChange(): MethodDecorator {
  return SetMetadata(BEFORE_PASSWORD_CHANGE, true);
}

function requestOf(context: ExecutionContext): FastifyRequest {
  return context.switchToHttp().getRequest<FastifyRequest>();
}

/** The authenticated administrator. */
export const CurrentAdmin = createParamDecorator((_data: unknown, context: ExecutionContext) => {
  const admin = requestOf(context).admin;
  if (!admin) throw new Error('CurrentAdmin used on a route without authentication');
  return admin satisfies AdminPrincipal;
});

/** The authenticated administrator and the client's address, for the audit log. */
export const CurrentActor = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Actor => {
    const request = requestOf(context);
    if (!request.admin) throw new Error('CurrentActor used on a route without authentication');
    return actorOf(request.admin, request.ip);
  },
);

/** The client's address (the edge's X-Forwarded-For when the peer is a trusted proxy). */
export const ClientIp = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string => requestOf(context).ip,
);
