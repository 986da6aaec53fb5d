import { BlockList, isIP } from 'node:net';
import { Inject, Injectable } from '@nestjs/common';
import { GatewayError } from '@switchyard/contracts';
import { TokenStatus } from '@switchyard/db/sql';
import { subjectsCovering, type BudgetPeriodName } from '@switchyard/domain';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { Registry, TalliedCounter, type CounterTally } from '@switchyard/observability';
import { TokensRepository, type TokenRow } from './tokens.repository.js';

// Gateway tokens as the edge checks them, cached in memory by the SHA-256 of their value,
// with what pays for them: team, price group multiplier, balance and the budgets covering
// them (docs/budgets.md). Admin changes arrive as `token.changed`, `budget.changed`,
// `team.changed` and `price-group.changed` events and metering's as `token.exhausted`.
// Events are missed only while a connection to Redis is away, so every entry is read again
// when the bus's subscriber or the keyed client comes back; entries also expire on their
// own after about ten minutes, the backstop for anything else. While Postgres
// cannot be asked, an expired entry is still used (docs/reliability.md): a token the edge
// knew keeps working through a database restart, and one it never saw gets a 503.
// `edge_token_lookups_total` counts lookups answered from memory against those that waited
// for Postgres (docs/operations.md, "Metrics").

export interface GatewayToken {
  id: number;
  keyHash: string;
  status: TokenStatus;
  expiresAt: number | null;
  exhausted: boolean;
  models: string[];
  /** Null: any address. */
  allowIps: BlockList | null;
  group: string;
  rateLimit: number | null;
  /** Whether the token has a quota (spent or not): unpriced models may be refused to it. */
  hasQuota: boolean;
  /** Micro-dollars; null: unlimited. Requests hold their worst case against it (quota/). */
  quota: number | null;
  /** The team that pays, and the member who owns the token (docs/budgets.md). */
  teamId: number | null;
  ownerId: number | null;
  /** The price group multiplier of its requests, parts per million. */
  priceMultiplier: number;
  /** A team on a prepaid balance: balance + debited when read (the ledger's limit); else null. */
  balanceLimit: number | null;
  /** The budgets covering it (token, member, team, gateway), narrowest first. */
  budgets: TokenBudget[];
  /** Its bodies go to the request log: its own flag or its team's (request-log/). */
  requestLog: boolean;
}

export interface TokenBudget {
  subject: string;
  /** Micro-dollars per period. */
  amount: number;
  period: BudgetPeriodName;
  /** Shown to the key itself (`/v1/key/info`); not enforced: metering alerts on it. */
  softPercent: number | null;
}

interface Entry {
  token: GatewayToken;
  expires: number;
}

/**
 * How long a token read from Postgres is believed without an event: long, since a missed
 * event comes with a reconnection and that already makes every entry read again. Each read
 * at 10,000 tokens in use costs the edge about 0.5 ms of CPU (docs/performance.md,
 * "Tokens"): a minute's expiry cost them a tenth of the edge's CPU.
 */
const FOUND_TTL_MS = 600_000;
/** Entries read together (at start) expire spread over this much more, not all at once. */
const FOUND_TTL_SPREAD_MS = 60_000;
/** Unknown tokens are remembered briefly, so a flood of bad keys does not reach Postgres. */
const UNKNOWN_TTL_MS = 5_000;
/**
 * And at most this many at once, the oldest forgotten first: a flood of random keys, each
 * seen once, would otherwise grow the edge's memory for as long as it lasts.
 */
export const MAX_UNKNOWN_TOKENS = 10_000;

export function toBlockList(cidrs: string[]): BlockList | null {
  if (cidrs.length === 0) return null;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address = '', bits] = cidr.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
}

@Injectable()
export class TokenDirectory {
  private readonly entries = new Map<string, Entry>();
  /** Hashes no token has, with until when that is believed, oldest first. */
  private readonly unknown = new Map<string, number>();
  private readonly loading = new Map<string, Promise<GatewayToken | null>>();
  private readonly lookups: Record<'hit' | 'miss' | 'unknown', CounterTally>;

  constructor(
    private readonly tokens: TokensRepository,
    @Inject(REDIS) redis: RedisClient,
    registry: Registry,
  ) {
    const lookups = new TalliedCounter({
      name: 'edge_token_lookups_total',
      help: 'Token lookups: hit (answered from memory), miss (waited for a read from Postgres) or unknown (the read found no such token).',
      labelNames: ['result'],
      registers: [registry],
    });
    // Bound once: every series is exported from the first scrape, and a lookup is an addition.
    this.lookups = {
      hit: lookups.tally({ result: 'hit' }),
      miss: lookups.tally({ result: 'miss' }),
      unknown: lookups.tally({ result: 'unknown' }),
    };
    redis.on('ready', () => this.expireAll());
  }

  /**
   * Events may have been missed while Redis was away: every token is read again before it
   * is trusted (what was cached stays a fallback should Postgres be away too).
   */
  expireAll(): void {
    for (const entry of this.entries.values()) entry.expires = 0;
    this.unknown.clear();
  }

  find(keyHash: string, now = Date.now()): GatewayToken | null | Promise<GatewayToken | null> {
    const entry = this.entries.get(keyHash);
    if (entry && entry.expires > now) {
      this.lookups.hit.inc();
      return entry.token;
    }
    if ((this.unknown.get(keyHash) ?? 0) > now) {
      this.lookups.hit.inc();
      return null;
    }
    let pending = this.loading.get(keyHash);
    if (!pending) {
      pending = this.load(keyHash, entry).finally(() => this.loading.delete(keyHash));
      this.loading.set(keyHash, pending);
    }
    // Lookups of one token waiting together share one read, and each counts.
    return pending.then((token) => {
      (token ? this.lookups.miss : this.lookups.unknown).inc();
      return token;
    });
  }

  private async load(keyHash: string, stale: Entry | undefined): Promise<GatewayToken | null> {
    let row: TokenRow | undefined;
    let budgets: TokenBudget[] = [];
    try {
      row = await this.tokens.findByHash(keyHash);
      if (row) budgets = await this.budgetsOf(row);
    } catch {
      if (stale) return stale.token;
      throw new GatewayError(
        'service_unavailable',
        'The gateway cannot check this token right now (its database is unreachable); retry in a moment.',
        null,
        { retryAfterMs: 1_000 },
      );
    }
    const token: GatewayToken | null =
      row === undefined
        ? null
        : {
            id: row.id,
            keyHash: row.keyHash,
            status: row.status,
            expiresAt: row.expiresAt?.getTime() ?? null,
            exhausted: row.status === TokenStatus.exhausted || row.quotaSpent,
            models: row.models,
            allowIps: toBlockList(row.allowIps),
            group: row.group,
            rateLimit: row.rateLimit,
            hasQuota: row.hasQuota,
            quota: row.quota === null ? null : Number(row.quota),
            teamId: row.teamId,
            ownerId: row.ownerId,
            priceMultiplier: row.priceMultiplier,
            balanceLimit: row.balanceLimit === null ? null : Number(row.balanceLimit),
            budgets,
            requestLog: row.requestLog,
          };
    if (token) {
      const expires = Date.now() + FOUND_TTL_MS + Math.random() * FOUND_TTL_SPREAD_MS;
      this.entries.set(keyHash, { token, expires });
    } else this.rememberUnknown(keyHash);
    return token;
  }

  /** The budgets covering a token, narrowest first (the order refusals name them in). */
  private async budgetsOf(row: TokenRow): Promise<TokenBudget[]> {
    const subjects = subjectsCovering({
      tokenId: row.id,
      teamId: row.teamId,
      ownerId: row.ownerId,
    });
    const found = new Map((await this.tokens.budgets(subjects)).map((b) => [b.subject, b]));
    return subjects.flatMap((subject) => {
      const budget = found.get(subject);
      return budget
        ? [
            {
              subject,
              amount: Number(budget.amount),
              period: budget.period,
              softPercent: budget.softPercent,
            },
          ]
        : [];
    });
  }

  forget(keyHash: string): void {
    this.entries.delete(keyHash);
    this.unknown.delete(keyHash);
  }

  private rememberUnknown(keyHash: string): void {
    this.entries.delete(keyHash);
    this.unknown.delete(keyHash);
    if (this.unknown.size >= MAX_UNKNOWN_TOKENS) {
      this.unknown.delete(this.unknown.keys().next().value!);
    }
    this.unknown.set(keyHash, Date.now() + UNKNOWN_TTL_MS);
  }

  /**
   * Forgets every cached token `covers` selects (a budget, team or price group changed):
   * they are read again at their next request.
   */
  forgetWhere(covers: (token: GatewayToken) => boolean): void {
    for (const [keyHash, entry] of this.entries) {
      if (covers(entry.token)) this.entries.delete(keyHash);
    }
  }

  markExhausted(keyHash: string): void {
    const entry = this.entries.get(keyHash);
    if (entry) entry.token.exhausted = true;
  }
}
