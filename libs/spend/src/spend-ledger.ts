import type { Cluster, Redis } from 'ioredis';

// Spend holds: what requests in flight may still cost, held against the accounts that pay
// for them (a token's quota today), shared by every edge replica through Redis
// (docs/architecture.md, "Spend holds"). A request holds its worst case before it is
// forwarded; once its usage is committed to the store of record, the hold is dropped and
// the account's settled spend catches up with that store, in one step.
//
// Per account, three keys under one hash tag (so a move to Redis Cluster keeps an account
// on one slot): its settled spend (a copy of the store of record's, which expires so that
// drift heals), its holds (request id -> amount, with the sum and the one partial hold
// under fields no request id can take) and the holds' expiries (so that a hold an edge
// died with is dropped after a bound).
//
// Amounts are integers (micro-dollars): Lua's doubles are exact up to 2^53, some nine
// billion dollars.

/** A hold an edge died with is dropped this long after it was taken: a long stream's span. */
export const DEFAULT_HOLD_MS = 15 * 60_000;
/** The settled copy is read again from the store of record this often, healing any drift. */
export const DEFAULT_SETTLED_MS = 5 * 60_000;

const COMMON = `
local function int(n) return string.format('%d', n) end
-- Drops one hold: its amount from the sum, and the partial mark if it was the partial one.
local function drop(h, x, member)
  local amount = redis.call('HGET', h, member)
  if amount then
    redis.call('HINCRBY', h, '#held', -tonumber(amount))
    redis.call('HDEL', h, member)
    if redis.call('HGET', h, '#partial') == member then redis.call('HDEL', h, '#partial') end
  end
  redis.call('ZREM', x, member)
end
`;

/**
 * All or nothing over the accounts given. Per account: expired holds are dropped; the
 * settled spend is seeded from ARGV when it is missing, or the reply asks for seeds; the
 * request holds its worst case if it fits under the limit with everything held, else what
 * is left, if anything is and no other request holds a partial amount there. A request
 * already holding on an account keeps its hold (a retried reserve takes nothing twice).
 *
 * Reply: {1, hold per account} | {0, refusing account, available} | {-1, accounts to seed}.
 */
const RESERVE = `${COMMON}
local now = tonumber(ARGV[1])
local id = ARGV[2]
local holdMs = tonumber(ARGV[3])
local settledMs = tonumber(ARGV[4])
local count = tonumber(ARGV[5])
local grants = {}
local missing = {}
for i = 0, count - 1 do
  local s, h, x = KEYS[i * 3 + 1], KEYS[i * 3 + 2], KEYS[i * 3 + 3]
  local limit = tonumber(ARGV[6 + i * 3])
  local amount = tonumber(ARGV[7 + i * 3])
  local seed = ARGV[8 + i * 3]
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', x, '-inf', now)) do drop(h, x, member) end
  local settled = redis.call('GET', s)
  if not settled and seed ~= '' then
    redis.call('SET', s, seed, 'PX', settledMs)
    settled = seed
  end
  if not settled then
    missing[#missing + 1] = i
  else
    local existing = redis.call('HGET', h, id)
    if existing then
      grants[i + 1] = {tonumber(existing), false, true}
    else
      local held = tonumber(redis.call('HGET', h, '#held') or '0')
      local available = limit - tonumber(settled) - held
      if amount <= available then
        grants[i + 1] = {amount, false, false}
      elseif available > 0 and redis.call('HEXISTS', h, '#partial') == 0 then
        grants[i + 1] = {available, true, false}
      else
        return {0, i, int(math.max(available, 0))}
      end
    end
  end
end
if #missing > 0 then
  local reply = {-1}
  for _, i in ipairs(missing) do reply[#reply + 1] = i end
  return reply
end
local reply = {1}
for i = 0, count - 1 do
  local h, x = KEYS[i * 3 + 2], KEYS[i * 3 + 3]
  local grant = grants[i + 1]
  if not grant[3] then
    redis.call('HSET', h, id, int(grant[1]))
    redis.call('HINCRBY', h, '#held', int(grant[1]))
    if grant[2] then redis.call('HSET', h, '#partial', id) end
    redis.call('ZADD', x, now + holdMs, id)
    -- Every hold lives as long: the newest outlives the others, and the keys with it.
    redis.call('PEXPIRE', h, holdMs)
    redis.call('PEXPIRE', x, holdMs)
  end
  reply[#reply + 1] = int(grant[1])
end
return reply
`;

/**
 * Drops the holds of settled (or failed) requests and raises each account's settled spend
 * to the store of record's committed total, never lowers it: totals of concurrent batches
 * may arrive out of order, and a replayed settlement changes nothing.
 * ARGV: settledMs, then per account: total ('' for none), n, n request ids.
 */
const SETTLE = `${COMMON}
local settledMs = tonumber(ARGV[1])
local a = 2
for k = 0, #KEYS / 3 - 1 do
  local s, h, x = KEYS[k * 3 + 1], KEYS[k * 3 + 2], KEYS[k * 3 + 3]
  local total = ARGV[a]
  local n = tonumber(ARGV[a + 1])
  for j = 0, n - 1 do drop(h, x, ARGV[a + 2 + j]) end
  a = a + 2 + n
  if total ~= '' then
    local current = redis.call('GET', s)
    if not current then
      redis.call('SET', s, total, 'PX', settledMs)
    elseif tonumber(total) > tonumber(current) then
      redis.call('SET', s, total, 'KEEPTTL')
    end
  end
end
return 0
`;

/** An account's name: its kind and id (`token:42`). */
export function spendAccount(kind: string, id: number | string): string {
  return `${kind}:${id}`;
}

/** The keys of an account, under one hash tag. */
export function spendKeys(account: string): { settled: string; holds: string; expiries: string } {
  return {
    settled: `spend:{${account}}:s`,
    holds: `spend:{${account}}:h`,
    expiries: `spend:{${account}}:x`,
  };
}

export interface Charge {
  account: string;
  /** The account's limit, in the ledger's unit. */
  limit: number;
  /** The request's worst-case cost on this account. */
  amount: number;
}

export type ReserveResult =
  /** What is held on each account, in the order given (less than asked: a partial hold). */
  | { kind: 'held'; holds: number[] }
  /** The account (by index) that has no room: `available` is what it had left. */
  | { kind: 'refused'; index: number; available: number };

/** Reads the settled spend of accounts Redis has no copy of, from the store of record. */
export type SeedReader = (accounts: string[]) => Promise<number[]>;

export interface Settlement {
  account: string;
  /** The account's spend committed in the store of record, these requests included; null if unknown. */
  total: number | null;
  requestIds: string[];
}

export interface SpendLedgerOptions {
  holdMs?: number;
  settledMs?: number;
}

type ScriptCommand<R> = (numberOfKeys: number, ...keysAndArgs: (string | number)[]) => Promise<R>;

export class SpendLedger {
  private readonly reserveScript: ScriptCommand<(number | string)[]>;
  private readonly settleScript: ScriptCommand<number>;
  readonly holdMs: number;
  readonly settledMs: number;

  /** @param redis a client whose key prefix is the installation's namespace */
  constructor(
    private readonly redis: Redis | Cluster,
    options: SpendLedgerOptions = {},
  ) {
    this.holdMs = options.holdMs ?? DEFAULT_HOLD_MS;
    this.settledMs = options.settledMs ?? DEFAULT_SETTLED_MS;
    redis.defineCommand('switchyardReserveSpend', { lua: RESERVE });
    redis.defineCommand('switchyardSettleSpend', { lua: SETTLE });
    const commands = redis as unknown as Record<string, ScriptCommand<never>>;
    this.reserveScript = commands.switchyardReserveSpend!.bind(redis);
    this.settleScript = commands.switchyardSettleSpend!.bind(redis);
  }

  /**
   * Holds the request's worst case on every account, or on none. One round trip, two when
   * an account's settled spend must first be read from the store of record.
   *
   * On a cluster, a request's accounts are on several slots (each account is its own hash
   * tag), and one script may touch only one slot: each account is reserved by its own
   * script call, all at once, and the holds taken are given back when any account refuses
   * (`reserveEach`).
   */
  async reserve(
    requestId: string,
    charges: Charge[],
    seed: SeedReader,
    now = Date.now(),
  ): Promise<ReserveResult> {
    if (charges.length === 0) return { kind: 'held', holds: [] };
    if (this.redis.isCluster && charges.length > 1) {
      return this.reserveEach(requestId, charges, seed, now);
    }
    let seeds: (number | null)[] = charges.map(() => null);
    for (let round = 0; ; round += 1) {
      const reply = await this.reserveTogether(requestId, charges, seeds, now);
      if (reply.kind !== 'missing') return reply;
      // The copy may expire again between two calls: a third asks no more of the store.
      if (round > 0) throw new Error('the spend ledger kept asking for seeds');
      const read = await seed(reply.indexes.map((i) => charges[i]!.account));
      seeds = charges.map(() => null);
      reply.indexes.forEach((i, n) => (seeds[i] = read[n]!));
    }
  }

  /**
   * The cluster's reservation: one script per account, so every script stays on its
   * account's slot (docs/scaling.md, "Redis"). Tagging all of a request's accounts alike
   * cannot work, since accounts are shared by requests with other sets (every request of
   * a team holds on `budget:team:3`, every request at all on the gateway's budget): one
   * common tag would put every account on one slot, and one node would carry every
   * reservation, as the limiter's one slot carries every admission. Per account, each
   * script is atomic, so the bound holds per account as before (docs/budgets.md,
   * "Reservations"); what is lost is all-or-none between accounts: a request refused on one
   * account holds on the others until it gives them back, a round trip later, and a
   * request arriving meanwhile may be refused by those holds. That errs towards refusing,
   * never towards spending past a limit (docs/budgets.md, "Redis Cluster").
   */
  private async reserveEach(
    requestId: string,
    charges: Charge[],
    seed: SeedReader,
    now: number,
  ): Promise<ReserveResult> {
    const holds: (number | null)[] = charges.map(() => null);
    const seeds: (number | null)[] = charges.map(() => null);
    const giveBack = () =>
      this.release(
        requestId,
        charges.filter((_, i) => holds[i] !== null).map((charge) => charge.account),
      );
    for (let round = 0; ; round += 1) {
      const pending = charges.flatMap((_, i) => (holds[i] === null ? [i] : []));
      const replies = await Promise.allSettled(
        pending.map((i) => this.reserveTogether(requestId, [charges[i]!], [seeds[i] ?? null], now)),
      );
      let refused: { index: number; available: number } | undefined;
      const missing: number[] = [];
      let failure: Error | undefined;
      for (const [n, reply] of replies.entries()) {
        const i = pending[n]!;
        if (reply.status === 'rejected') failure ??= reply.reason as Error;
        else if (reply.value.kind === 'held') holds[i] = reply.value.holds[0]!;
        else if (reply.value.kind === 'missing') missing.push(i);
        // The narrowest account refusing is the one named, as in one script.
        else if (refused === undefined || i < refused.index) {
          refused = { index: i, available: reply.value.available };
        }
      }
      if (failure !== undefined || refused !== undefined || (missing.length > 0 && round > 0)) {
        // Best effort: a hold not given back expires after holdMs.
        await giveBack().catch(() => undefined);
        if (failure !== undefined) throw failure;
        if (refused !== undefined) return { kind: 'refused', ...refused };
        throw new Error('the spend ledger kept asking for seeds');
      }
      if (missing.length === 0) return { kind: 'held', holds: holds as number[] };
      let read: number[];
      try {
        read = await seed(missing.map((i) => charges[i]!.account));
      } catch (error) {
        await giveBack().catch(() => undefined);
        throw error;
      }
      missing.forEach((i, n) => (seeds[i] = read[n]!));
    }
  }

  /** One script over the accounts given: on a cluster, they must share a slot. */
  private async reserveTogether(
    requestId: string,
    charges: Charge[],
    seeds: (number | null)[],
    now: number,
  ): Promise<ReserveResult | { kind: 'missing'; indexes: number[] }> {
    const keys: string[] = [];
    const args: (string | number)[] = [now, holdField(requestId), this.holdMs, this.settledMs];
    args.push(charges.length);
    charges.forEach((charge, i) => {
      const { settled, holds, expiries } = spendKeys(charge.account);
      keys.push(settled, holds, expiries);
      args.push(
        whole(charge.limit),
        whole(charge.amount),
        seeds[i] === null ? '' : whole(seeds[i]!),
      );
    });
    const reply = await this.reserveScript(keys.length, ...keys, ...args);
    const [status, ...rest] = reply.map(Number);
    if (status === 1) return { kind: 'held', holds: rest };
    if (status === 0) return { kind: 'refused', index: rest[0]!, available: rest[1]! };
    return { kind: 'missing', indexes: rest };
  }

  /** Drops a request's holds: it failed, and costs nothing. */
  release(requestId: string, accounts: string[]): Promise<void> {
    return this.settle(
      accounts.map((account) => ({ account, total: null, requestIds: [requestId] })),
    );
  }

  /**
   * Moves requests from held to settled, once their usage is committed. Idempotent. Each
   * account is settled on its own, so on a cluster, where one script's keys must share a
   * slot, a batch over accounts of several slots is one call per account instead of one.
   */
  async settle(settlements: Settlement[]): Promise<void> {
    if (settlements.length === 0) return;
    if (this.redis.isCluster && settlements.length > 1) {
      await Promise.all(settlements.map((settlement) => this.settleTogether([settlement])));
      return;
    }
    await this.settleTogether(settlements);
  }

  private async settleTogether(settlements: Settlement[]): Promise<void> {
    const keys: string[] = [];
    const args: (string | number)[] = [this.settledMs];
    for (const { account, total, requestIds } of settlements) {
      const { settled, holds, expiries } = spendKeys(account);
      keys.push(settled, holds, expiries);
      args.push(
        total === null ? '' : whole(total),
        requestIds.length,
        ...requestIds.map(holdField),
      );
    }
    await this.settleScript(keys.length, ...keys, ...args);
  }

  /** Forgets an account's settled copy: its spend was changed outside usage (an admin reset). */
  async forget(account: string): Promise<void> {
    await this.redis.del(spendKeys(account).settled);
  }
}

/** Hold fields never meet the hash's own (`#held`, `#partial`), whatever a request id is. */
function holdField(requestId: string): string {
  return `r:${requestId}`;
}

function whole(value: number): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`not a whole amount: ${value}`);
  return String(value);
}
