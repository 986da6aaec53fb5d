import { IsOptional } from 'class-validator';
import {
  IntegerVariable,
  ListVariable,
  PortVariable,
  TextVariable,
  UrlVariable,
  TimeZoneVariable,
} from '../variables.js';
import { CIDR } from './base.js';
import { LoginThrottleEnv } from './login-throttle.js';

export class AdminEnv extends LoginThrottleEnv {
  @PortVariable()
  ADMIN_PORT: number = 3001;

  /** `/metrics` (and probes) only, never exposed publicly (docs/architecture.md, "Operations ports"). */
  @PortVariable()
  ADMIN_OPS_PORT: number = 3011;

  /** The first gateway administrator, created when none exists. */
  @TextVariable({
    optional: true,
    pattern: /^[A-Za-z0-9_.-]{3,64}$/,
    expects: '3 to 64 letters, digits, _ . or -',
  })
  ADMIN_USERNAME?: string;

  @TextVariable({ optional: true, pattern: /^.{8,256}$/, expects: 'at least 8 characters' })
  ADMIN_PASSWORD?: string;

  /**
   * A streaming replica of DATABASE_URL's database. Usage listings and totals and the
   * overview's charts read from it, never anything an administrator has just written;
   * they may then be as far behind as the replica's replay (docs/scaling.md, "Read replica").
   */
  @IsOptional()
  @UrlVariable(['postgres', 'postgresql'])
  DATABASE_READ_URL?: string;

  @IntegerVariable(60, 30 * 86_400)
  SESSION_TTL_SECONDS: number = 12 * 3600;

  /** Peers whose X-Forwarded-For is believed (the edge, on loopback by default). */
  @ListVariable(CIDR, 'IP addresses or CIDRs')
  TRUSTED_PROXIES: string[] = ['127.0.0.1/32', '::1/128'];

  /** How long a channel test waits for the upstream's whole answer. */
  @IntegerVariable(100, 600_000)
  CHANNEL_TEST_TIMEOUT_MS: number = 15_000;

  /**
   * The time zone budget periods start in (midnight, Monday, the 1st): the one the edge and
   * metering use, so the dashboard's spend and reset times are theirs (docs/teams.md).
   */
  @TimeZoneVariable()
  BUDGET_TIME_ZONE: string = 'UTC';

  /**
   * Redemption codes that did not work (unknown, used, expired) one member may try within
   * an hour before further tries are refused (docs/teams.md, "Redemption codes").
   */
  @IntegerVariable(1, 1_000_000)
  REDEEM_MAX_FAILURES_PER_MEMBER: number = 10;

  /** The same, per client address over every member. */
  @IntegerVariable(1, 1_000_000)
  REDEEM_MAX_FAILURES_PER_IP: number = 30;
}
