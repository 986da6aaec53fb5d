import { type AdminRole } from '@switchyard/db';
import { type Actor } from '@switchyard/gateway-store';

// Who acts is defined by the gateway store, which records it with every change it audits.
export { CLI_ACTOR, SYSTEM_ACTOR, type Actor } from '@switchyard/gateway-store';

/** The administrator behind an authenticated request. */
export interface AdminPrincipal {
  id: number;
  username: string;
  role: AdminRole;
  mustChangePassword: boolean;
  /** SHA-256 of the session token the request carried. */
  sessionHash: string;
}

export function actorOf(admin: AdminPrincipal, clientIp: string | null): Actor {
  return { id: admin.id, name: admin.username, clientIp };
}
