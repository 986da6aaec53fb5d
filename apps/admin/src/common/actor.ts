import { type AdminRole } from '@switchyard/db';

/** Who makes a change, as the audit log records it. */
export interface Actor {
  /** Null for the command-line tool and the start-up bootstrap. */
  id: number | null;
  name: string;
  clientIp: string | null;
}

/** The administrator behind an authenticated request. */
export interface AdminPrincipal {
  id: number;
  username: string;
  role: AdminRole;
  mustChangePassword: boolean;
  /** SHA-256 of the session token the request carried. */
  sessionHash: string;
}

export const CLI_ACTOR: Actor = { id: null, name: 'cli', clientIp: null };
export const SYSTEM_ACTOR: Actor = { id: null, name: 'system', clientIp: null };

export function actorOf(admin: AdminPrincipal, clientIp: string | null): Actor {
  return { id: admin.id, name: admin.username, clientIp };
}
