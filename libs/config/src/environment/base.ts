import { IntegerVariable, OneOfVariable, TextVariable } from '../variables.js';

// What every app reads: how it runs, logs, listens and stops.

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** IP addresses or CIDRs, for the TRUSTED_PROXIES of the apps behind a proxy. */
export const CIDR = /^(\d{1,3}(\.\d{1,3}){3}(\/\d{1,2})?|[0-9a-fA-F:]+(\/\d{1,3})?)$/;

export class BaseEnv {
  @OneOfVariable(['development', 'production', 'test'])
  NODE_ENV: string = 'development';

  @OneOfVariable(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @TextVariable({ expects: 'an IP address to listen on' })
  BIND_ADDRESS: string = '0.0.0.0';

  /** How long SIGTERM waits for in-flight requests and jobs before closing anyway. */
  @IntegerVariable(0, 600_000)
  SHUTDOWN_GRACE_MS: number = 10_000;
}
