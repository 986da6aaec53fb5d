import { TurnBatchedScript } from '@switchyard/messaging';
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
/**
 * A block of holds (spend-blocks.ts) may be carved this long after it was taken: it lives
 * that much longer than a hold, so a request carved at its last moment is held as long.
 */
export const BLOCK_VALIDITY_MS = 1_000;

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
-- Gives back to a block what its settled requests were carved for, each request once (its
-- marker stays in the block's set, so a settlement sent twice gives back once), and, for
-- the id '', the rest its owner did not carve. ARGV[from...] holds count pairs (amount,
-- id). One set membership check, one add and one change of the block for all of them: a
-- batch's requests were mostly carved from a few blocks. A block given back whole is
-- dropped with its markers.
local function giveBack(h, x, marker, field, from, count, lifetime)
  local current = redis.call('HGET', h, field)
  if not current then return end
  local amount = 0
  local ids, amounts = {}, {}
  for j = 0, count - 1 do
    local id = ARGV[from + j * 2 + 1]
    if id == '' then amount = amount + tonumber(ARGV[from + j * 2])
    else
      ids[#ids + 1] = id
      amounts[#ids] = tonumber(ARGV[from + j * 2])
    end
  end
  local new, seen = {}, {}
  -- In slices: Lua's unpack takes some thousands of values at most.
  for first = 1, #ids, 1000 do
    local last = math.min(first + 999, #ids)
    local known = redis.call('SMISMEMBER', marker, unpack(ids, first, last))
    for i = first, last do
      local id = ids[i]
      if known[i - first + 1] == 0 and not seen[id] then
        seen[id] = true
        new[#new + 1] = id
        amount = amount + amounts[i]
      end
    end
  end
  for first = 1, #new, 1000 do
    redis.call('SADD', marker, unpack(new, first, math.min(first + 999, #new)))
  end
  if #new > 0 then redis.call('PEXPIRE', marker, lifetime) end
  if amount == 0 then return end
  local left = tonumber(current) - amount
  if left > 0 then
    redis.call('HSET', h, field, int(left))
    redis.call('HINCRBY', h, '#held', -amount)
  else
    drop(h, x, field)
    redis.call('DEL', marker)
  end
end
`;

/**
 * All or nothing over the accounts given. Per account: expired holds are dropped; the
 * settled spend is seeded from ARGV when it is missing, or the reply asks for seeds; the
 * request holds its worst case if it fits under the limit with everything held, else what
 * is left, if anything is and no other request holds a partial amount there. A request
 * already holding on an account keeps its hold (a retried reserve takes nothing twice).
 * When a block is asked (ARGV[6], a field) and the request holds its whole worst case on
 * every account, the block also holds the spare asked, or a sixteenth of the room left
 * after the request on the narrowest account if that is less, when it is at least the
 * minimum; else nothing.
 *
 * Reply: {1, block held, hold per account} | {0, refusing account, available} |
 * {-1, accounts to seed}.
 */
const RESERVE = `${COMMON}
-- One request's reservation: K and A are its KEYS and ARGV.
local function run(K, A)
  local now = tonumber(A[1])
  local id = A[2]
  local holdMs = tonumber(A[3])
  local settledMs = tonumber(A[4])
  local count = tonumber(A[5])
  local block = A[6]
  local spare = tonumber(A[7])
  local minimum = tonumber(A[8])
  local lifetime = holdMs + tonumber(A[9])
  local grants = {}
  local missing = {}
  for i = 0, count - 1 do
    local s, h, x = K[i * 3 + 1], K[i * 3 + 2], K[i * 3 + 3]
    local limit = tonumber(A[10 + i * 3])
    local amount = tonumber(A[11 + i * 3])
    local seed = A[12 + i * 3]
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
          -- A block takes at most a sixteenth of the room left: near the limit it shrinks
          -- below the minimum, and every request holds on its own.
          if block ~= '' then spare = math.min(spare, math.floor((available - amount) / 16)) end
        elseif available > 0 and redis.call('HEXISTS', h, '#partial') == 0 then
          grants[i + 1] = {available, true, false}
          block = ''
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
  for i = 1, count do if grants[i][3] then block = '' end end
  if block == '' or spare < minimum then spare = 0 end
  local reply = {1, int(spare)}
  for i = 0, count - 1 do
    local h, x = K[i * 3 + 2], K[i * 3 + 3]
    local grant = grants[i + 1]
    if not grant[3] then
      redis.call('HSET', h, id, int(grant[1]))
      redis.call('HINCRBY', h, '#held', int(grant[1]))
      if grant[2] then redis.call('HSET', h, '#partial', id) end
      redis.call('ZADD', x, now + holdMs, id)
    end
    if spare > 0 then
      redis.call('HSET', h, block, int(spare))
      redis.call('HINCRBY', h, '#held', int(spare))
      redis.call('ZADD', x, now + lifetime, block)
    end
    -- Every hold lives as long (a block a validity longer): the newest outlives the others,
    -- and the keys with it.
    redis.call('PEXPIRE', h, lifetime)
    redis.call('PEXPIRE', x, lifetime)
    reply[#reply + 1] = int(grant[1])
  end
  return reply
end
`;

/**
 * Drops the holds of settled (or failed) requests, gives carved requests' amounts back to
 * their blocks, and raises each account's settled spend to the store of record's committed
 * total, never lowers it: totals of concurrent batches may arrive out of order, and a
 * replayed settlement changes nothing.
 * ARGV: settledMs, lifetime, then per account: total ('' for none), n, n request hold
 * fields, m, then per block given back to (m of them): its field, c, c carves (amount,
 * request id or '' for the block's rest).
 * KEYS: per account its three keys, then one marker set per block given back to.
 */
const SETTLE = `${COMMON}
local settledMs = tonumber(ARGV[1])
local lifetime = tonumber(ARGV[2])
local a = 3
local k = 1
while a <= #ARGV do
  local s, h, x = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  k = k + 3
  local total = ARGV[a]
  local n = tonumber(ARGV[a + 1])
  for j = 0, n - 1 do drop(h, x, ARGV[a + 2 + j]) end
  a = a + 2 + n
  local m = tonumber(ARGV[a])
  a = a + 1
  for j = 0, m - 1 do
    local c = tonumber(ARGV[a + 1])
    giveBack(h, x, KEYS[k + j], ARGV[a], a + 2, c, lifetime)
    a = a + 2 + c * 2
  end
  k = k + m
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

/** The requests a block has given back for, on one account: a settlement sent twice counts once. */
function carveMarkers(account: string, block: string): string {
  return `spend:{${account}}:c:${block}`;
}

export interface Charge {
  account: string;
  /** The account's limit, in the ledger's unit. */
  limit: number;
  /** The request's worst-case cost on this account. */
  amount: number;
}

/**
 * A block of holds asked with a request's own (spend-blocks.ts): `spare` more on every
 * account, or as much of it as fits, if that is at least `minimum`.
 */
export interface BlockAsk {
  id: string;
  spare: number;
  minimum: number;
}

export type ReserveResult =
  /**
   * What is held on each account, in the order given (less than asked: a partial hold),
   * and the block held beside it on every account, when one was asked (0: none fitted).
   */
  | { kind: 'held'; holds: number[]; block?: number }
  /** The account (by index) that has no room: `available` is what it had left. */
  | { kind: 'refused'; index: number; available: number };

/** Reads the settled spend of accounts Redis has no copy of, from the store of record. */
export type SeedReader = (accounts: string[]) => Promise<number[]>;

/**
 * Part of a block given back: a request carved from it, once settled (its `requestId`), or
 * what the block's owner did not carve (`requestId` null).
 */
export interface Carve {
  block: string;
  amount: number;
  requestId: string | null;
}

export interface Settlement {
  account: string;
  /** The account's spend committed in the store of record, these requests included; null if unknown. */
  total: number | null;
  /** Requests holding on their own. */
  requestIds: string[];
  /** Requests whose hold was carved from a block, and blocks' rests. */
  carves?: Carve[];
}

export interface SpendLedgerOptions {
  holdMs?: number;
  settledMs?: number;
}

type ReserveReply = (number | string)[];

type ScriptCommand<R> = (numberOfKeys: number, ...keysAndArgs: (string | number)[]) => Promise<R>;

export class SpendLedger {
  /**
   * A turn's reservations go as one script call (docs/architecture.md, "Spend holds"); not
   * on a cluster, where their accounts are on many slots.
   */
  private readonly reserveScript: TurnBatchedScript<ReserveReply>;
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
    this.reserveScript = new TurnBatchedScript(
      redis,
      'switchyardReserveSpend',
      RESERVE,
      !redis.isCluster,
    );
    redis.defineCommand('switchyardSettleSpend', { lua: SETTLE });
    const commands = redis as unknown as Record<string, ScriptCommand<never>>;
    this.settleScript = commands.switchyardSettleSpend!.bind(redis);
  }

  /**
   * Holds the request's worst case on every account, or on none. One round trip, two when
   * an account's settled spend must first be read from the store of record. A block asked
   * beside it is held in the same step.
   *
   * On a cluster, a request's accounts are on several slots (each account is its own hash
   * tag), and one script may touch only one slot: each account is reserved by its own
   * script call, all at once, and the holds taken are given back when any account refuses
   * (`reserveEach`). No block is held there: its accounts would not agree on its size.
   */
  async reserve(
    requestId: string,
    charges: Charge[],
    seed: SeedReader,
    now = Date.now(),
    block?: BlockAsk,
  ): Promise<ReserveResult> {
    if (charges.length === 0) return { kind: 'held', holds: [] };
    if (this.redis.isCluster && charges.length > 1) {
      return this.reserveEach(requestId, charges, seed, now);
    }
    let seeds: (number | null)[] = charges.map(() => null);
    for (let round = 0; ; round += 1) {
      const reply = await this.reserveTogether(requestId, charges, seeds, now, block);
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
    block?: BlockAsk,
  ): Promise<ReserveResult | { kind: 'missing'; indexes: number[] }> {
    const keys: string[] = [];
    const args: (string | number)[] = [now, holdField(requestId), this.holdMs, this.settledMs];
    args.push(
      charges.length,
      block ? blockField(block.id) : '',
      block ? whole(block.spare) : 0,
      block ? whole(block.minimum) : 0,
      BLOCK_VALIDITY_MS,
    );
    charges.forEach((charge, i) => {
      const { settled, holds, expiries } = spendKeys(charge.account);
      keys.push(settled, holds, expiries);
      args.push(
        whole(charge.limit),
        whole(charge.amount),
        seeds[i] === null ? '' : whole(seeds[i]!),
      );
    });
    const reply = await this.reserveScript.call(keys, args);
    const [status, ...rest] = reply.map(Number);
    if (status === 1) {
      const [held, ...holds] = rest;
      return block ? { kind: 'held', holds, block: held! } : { kind: 'held', holds };
    }
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
    const args: (string | number)[] = [this.settledMs, this.holdMs + BLOCK_VALIDITY_MS];
    for (const { account, total, requestIds, carves = [] } of settlements) {
      const { settled, holds, expiries } = spendKeys(account);
      keys.push(settled, holds, expiries);
      const byBlock = new Map<string, Carve[]>();
      for (const carve of carves) {
        const given = byBlock.get(carve.block);
        if (given) given.push(carve);
        else byBlock.set(carve.block, [carve]);
      }
      args.push(
        total === null ? '' : whole(total),
        requestIds.length,
        ...requestIds.map(holdField),
        byBlock.size,
      );
      for (const [block, given] of byBlock) {
        keys.push(carveMarkers(account, block));
        args.push(blockField(block), given.length);
        for (const carve of given) args.push(whole(carve.amount), carve.requestId ?? '');
      }
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

function blockField(block: string): string {
  return `b:${block}`;
}

function whole(value: number): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`not a whole amount: ${value}`);
  return String(value);
}
