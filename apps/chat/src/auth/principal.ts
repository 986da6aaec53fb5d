import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { type FastifyRequest } from 'fastify';

export type Role = 'user' | 'admin';

/** The signed-in user a request acts for, as the session guard found them. */
export interface Principal {
  id: number;
  username: string;
  role: Role;
  modelPermissions: string[];
  /** SHA-256 of the session token, so the session can be ended. */
  sessionHash: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export const IS_PUBLIC = Symbol('IS_PUBLIC');

/** The route needs no session (register, login). Never honoured under /api/admin. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

/** The principal of an authenticated route. */
export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext) => {
  const principal = context.switchToHttp().getRequest<FastifyRequest>().principal;
  if (!principal) throw new ApiError('unauthenticated', 'Sign in first');
  return principal;
});
