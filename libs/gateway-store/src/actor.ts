/** Who makes a change, as the audit log records it. */
export interface Actor {
  /** An administrator's id; null for the command-line tool, the bootstrap and the router. */
  id: number | null;
  name: string;
  clientIp: string | null;
}

export const CLI_ACTOR: Actor = { id: null, name: 'cli', clientIp: null };
export const SYSTEM_ACTOR: Actor = { id: null, name: 'system', clientIp: null };
/** The router's automatic status changes (banned accounts, probes that answer again). */
export const ROUTER_ACTOR: Actor = { id: null, name: 'router', clientIp: null };
