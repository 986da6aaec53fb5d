// One edge's allowance for one limited account (or one rate-limited token): units it took
// from the shared count in Redis ahead of its requests, spent here without a round trip
// (docs/architecture.md, "Account limits"). Pure bookkeeping: the limiter talks to Redis.

/** How long a block of requests or tokens may be spent after it was taken. */
export const DEFAULT_VALIDITY_MS = 1_000;
/** An account with no admission for this long gives its free slots back. */
export const IDLE_MS = 200;
/** An edge holds at most this fraction of a limit ahead of demand, and this many units. */
const SPARE_DIVISOR = 16;
const SPARE_MAX = 256;
/**
 * Below this many admissions a second nothing is held ahead: the block would mostly expire
 * unspent, and each unit given back costs a write as each unit spent saved one. Many quiet
 * tokens, each rate limited, are the case (docs/performance.md, "Tokens").
 */
const MIN_DEMAND = 4;
/** A block is renewed once what is held falls to this share of what demand calls for. */
const RENEW_AT = 1 / 4;

export interface Limits {
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
}

export interface Timing {
  /** How long a block may be spent after it was taken. */
  validityMs: number;
  /** How long after it was taken a concurrency slot may serve another request. */
  slotReuseMs: number;
}

export interface AllowanceKeys {
  rpm: string;
  tpm: string;
  concurrency: string;
}

/** Entries `<prefix>:<i>` of the sliding log, scored as if made at `expiresAt`. */
interface EntryBlock {
  prefix: string;
  size: number;
  remaining: number;
  expiresAt: number;
}

/** Tokens charged to the bucket of `second`, not yet drawn by a request. */
interface BudgetBlock {
  second: number;
  remaining: number;
  expiresAt: number;
}

interface Slot {
  id: string;
  takenAt: number;
}

/** What one admitted request holds from an allowance until it ends. */
export interface Hold {
  entry: EntryBlock | null;
  budget: BudgetBlock | null;
  /** The bucket its token estimate was charged to (its correction goes there too). */
  tpmSecond: number;
  estimate: number;
  slot: Slot | null;
}

/** Something to give back to Redis, batched by the limiter. */
export type Giveback =
  | { kind: 'entries'; key: string; prefix: string; from: number; to: number }
  | { kind: 'tokens'; key: string; second: number; delta: number }
  | { kind: 'slot'; key: string; id: string };

/** Units to ask the script for, beyond the one the request in hand needs. */
export interface Wants {
  entries: number;
  tokens: number;
  slots: number;
}

/** What the script granted one account (the request in hand included). */
export interface Grant {
  prefix: string;
  entries: number;
  tokens: number;
  slots: number;
}

export class Allowance {
  private entryBlocks: EntryBlock[] = [];
  private budgetBlocks: BudgetBlock[] = [];
  private freeSlots: Slot[] = [];
  private busySlots = 0;
  private lastAdmission = 0;
  /** Admissions in the current and the previous second, for the block size. */
  private demandStart = 0;
  private demandCurrent = 0;
  private demandPrevious = 0;
  /** Spare units asked by scripts still in flight, so concurrent misses do not pile up. */
  private asked: Wants = { entries: 0, tokens: 0, slots: 0 };
  /** Requests waiting for the script's answer about this account. */
  private waiting = 0;
  private closed = false;

  constructor(
    readonly keyId: number,
    readonly keys: AllowanceKeys,
    public limits: Limits,
    private readonly timing: Timing,
  ) {}

  /** Takes what one request needs from what is held here, or null if anything is short. */
  hold(estimate: number, now: number): Hold | null {
    if (this.closed) return null;
    const entry =
      this.limits.rpm === null
        ? null
        : this.entryBlocks.find((b) => b.remaining > 0 && b.expiresAt > now);
    if (entry === undefined) return null;
    const budget =
      this.limits.tpm === null
        ? null
        : this.budgetBlocks.find((b) => b.remaining >= estimate && b.expiresAt > now);
    if (budget === undefined) return null;
    let slot: Slot | null = null;
    if (this.limits.concurrency !== null) {
      const reusable = this.freeSlots.findIndex((s) => s.takenAt + this.timing.slotReuseMs > now);
      if (reusable === -1) return null;
      slot = this.freeSlots.splice(reusable, 1)[0]!;
    }
    if (entry) entry.remaining -= 1;
    if (budget) budget.remaining -= estimate;
    if (slot) this.busySlots += 1;
    return { entry, budget, tpmSecond: budget?.second ?? 0, estimate, slot };
  }

  /** Puts back a hold no request used (the script found an earlier candidate). */
  unhold(hold: Hold): void {
    if (hold.entry) hold.entry.remaining += 1;
    if (hold.budget) hold.budget.remaining += hold.estimate;
    if (hold.slot) {
      this.busySlots -= 1;
      this.freeSlots.push(hold.slot);
    }
  }

  /** Spare units worth asking for along with the request in hand. */
  wants(estimate: number, now: number): Wants {
    this.waiting += 1;
    const ahead = this.aheadOfDemand(estimate, now);
    if (!ahead) return { entries: 0, tokens: 0, slots: 0 };
    const { concurrency } = this.limits;
    const wants = {
      entries: Math.max(0, ahead.entries - held(this.entryBlocks, now) - this.asked.entries),
      tokens: Math.max(0, ahead.tokens - held(this.budgetBlocks, now) - this.asked.tokens),
      // Slots follow the requests in flight here, not the rate.
      slots:
        concurrency === null
          ? 0
          : Math.max(
              0,
              Math.min(spareCap(concurrency), this.busySlots) -
                this.freeSlots.length -
                this.asked.slots,
            ),
    };
    this.asked = add(this.asked, wants, 1);
    return wants;
  }

  /**
   * What this edge may hold ahead of its demand, entries and tokens: about a validity's
   * worth of its recent admissions, capped at a share of each limit. Null when nothing is
   * held ahead: a quiet account, a limit too small to spare, or one limit too small to
   * have spares while another could (a request is admitted here only with a unit of every
   * limit it has, so spares of one limit alone would be waste, kept from other replicas).
   */
  private aheadOfDemand(estimate: number, now: number): { entries: number; tokens: number } | null {
    const { rpm, tpm, concurrency } = this.limits;
    const spareable =
      (rpm === null || spareCap(rpm) >= 1) &&
      (tpm === null || spareCap(tpm, estimate) >= Math.max(estimate, 1)) &&
      (concurrency === null || spareCap(concurrency) >= 1);
    const rate = this.rate(now);
    if (this.closed || !spareable || rate < MIN_DEMAND) return null;
    const spareRequests = Math.ceil((rate * this.timing.validityMs) / 1000);
    return {
      entries: rpm === null ? 0 : Math.min(spareCap(rpm), spareRequests),
      tokens: tpm === null ? 0 : Math.min(spareCap(tpm, estimate), spareRequests * estimate),
    };
  }

  /**
   * Whether a request held here should also ask Redis for the next block: what is held of
   * the requests or the tokens has fallen to a quarter of what demand calls for, and no
   * request is asking already. The rest then carries the requests that come until the next
   * block is here; without it every request of those turns would ask Redis for itself
   * (docs/architecture.md, "Account limits").
   */
  renewing(estimate: number, now: number): boolean {
    if (this.waiting > 0) return false;
    const ahead = this.aheadOfDemand(estimate, now);
    if (!ahead) return false;
    const low = (have: number, wanted: number) => have > 0 && have <= wanted * RENEW_AT;
    return (
      (this.limits.rpm !== null && low(held(this.entryBlocks, now), ahead.entries)) ||
      (this.limits.tpm !== null &&
        held(this.budgetBlocks, now) >= estimate &&
        low(held(this.budgetBlocks, now), ahead.tokens))
    );
  }

  /** The script answered (granted or not): the spare asked is no longer in flight. */
  answered(wants: Wants): void {
    this.waiting -= 1;
    this.asked = add(this.asked, wants, -1);
  }

  /** Keeps what the script granted beyond the request in hand; the hold for that request. */
  install(grant: Grant, estimate: number, now: number): Hold {
    const expiresAt = now + this.timing.validityMs;
    if (this.limits.rpm !== null && grant.entries > 1) {
      const size = grant.entries;
      this.entryBlocks.push({ prefix: grant.prefix, size, remaining: size - 1, expiresAt });
    }
    if (this.limits.tpm !== null && grant.tokens > estimate) {
      this.budgetBlocks.push({
        second: Math.floor(expiresAt / 1000),
        remaining: grant.tokens - estimate,
        expiresAt,
      });
    }
    let slot: Slot | null = null;
    if (this.limits.concurrency !== null) {
      slot = { id: `${grant.prefix}:0`, takenAt: now };
      this.busySlots += 1;
      for (let i = 1; i < grant.slots; i += 1)
        this.freeSlots.push({ id: `${grant.prefix}:${i}`, takenAt: now });
    }
    return { entry: null, budget: null, tpmSecond: Math.floor(now / 1000), estimate, slot };
  }

  /** Counts an admission (local or not) for the demand and the idle clock. */
  admitted(now: number): void {
    if (now - this.demandStart >= 1000) {
      this.demandPrevious = now - this.demandStart >= 2000 ? 0 : this.demandCurrent;
      this.demandCurrent = 0;
      this.demandStart = now;
    }
    this.demandCurrent += 1;
    this.lastAdmission = now;
  }

  /** A request ended: its slot stays here for the next one or goes back; its tokens are corrected. */
  finish(hold: Hold, actualTokens: number, now: number): Giveback[] {
    const givebacks: Giveback[] = [];
    if (this.limits.tpm !== null && actualTokens !== hold.estimate) {
      givebacks.push({
        kind: 'tokens',
        key: this.keys.tpm,
        second: hold.tpmSecond,
        delta: actualTokens - hold.estimate,
      });
    }
    if (hold.slot) {
      this.busySlots -= 1;
      const keep =
        !this.closed &&
        this.limits.concurrency !== null &&
        hold.slot.takenAt + this.timing.slotReuseMs > now &&
        this.freeSlots.length < spareCap(this.limits.concurrency);
      if (keep) this.freeSlots.push(hold.slot);
      else givebacks.push({ kind: 'slot', key: this.keys.concurrency, id: hold.slot.id });
    }
    return givebacks;
  }

  /** Gives back blocks past their validity, and free slots when idle or too old. */
  sweep(now: number): Giveback[] {
    const givebacks: Giveback[] = [];
    this.entryBlocks = this.entryBlocks.filter((block) => {
      if (block.expiresAt > now) return true;
      givebacks.push(...this.returnEntries(block));
      return false;
    });
    this.budgetBlocks = this.budgetBlocks.filter((block) => {
      if (block.expiresAt > now) return true;
      givebacks.push(...this.returnBudget(block));
      return false;
    });
    const idle = now - this.lastAdmission >= IDLE_MS;
    this.freeSlots = this.freeSlots.filter((slot) => {
      if (!idle && slot.takenAt + this.timing.slotReuseMs > now) return true;
      givebacks.push({ kind: 'slot', key: this.keys.concurrency, id: slot.id });
      return false;
    });
    return givebacks;
  }

  /** Gives back everything held; later releases go straight back to Redis (shutdown). */
  drain(): Giveback[] {
    this.closed = true;
    const givebacks = [
      ...this.entryBlocks.flatMap((block) => this.returnEntries(block)),
      ...this.budgetBlocks.flatMap((block) => this.returnBudget(block)),
      ...this.freeSlots.map((slot): Giveback => ({
        kind: 'slot',
        key: this.keys.concurrency,
        id: slot.id,
      })),
    ];
    this.entryBlocks = [];
    this.budgetBlocks = [];
    this.freeSlots = [];
    return givebacks;
  }

  /** Nothing held and nothing in use: the allowance can be forgotten. */
  get empty(): boolean {
    return (
      this.entryBlocks.length === 0 &&
      this.budgetBlocks.length === 0 &&
      this.freeSlots.length === 0 &&
      this.busySlots === 0 &&
      this.waiting === 0
    );
  }

  private rate(now: number): number {
    const elapsed = now - this.demandStart;
    if (elapsed >= 2000) return 0;
    if (elapsed >= 1000) return this.demandCurrent * (1 - (elapsed - 1000) / 1000);
    return this.demandPrevious * (1 - elapsed / 1000) + this.demandCurrent;
  }

  private returnEntries(block: EntryBlock): Giveback[] {
    if (block.remaining <= 0) return [];
    const from = block.size - block.remaining;
    block.remaining = 0;
    return [{ kind: 'entries', key: this.keys.rpm, prefix: block.prefix, from, to: block.size }];
  }

  private returnBudget(block: BudgetBlock): Giveback[] {
    if (block.remaining <= 0) return [];
    const delta = -block.remaining;
    block.remaining = 0;
    return [{ kind: 'tokens', key: this.keys.tpm, second: block.second, delta }];
  }
}

/** The units of the blocks still valid. */
function held(blocks: { remaining: number; expiresAt: number }[], now: number): number {
  return blocks.reduce((sum, b) => sum + (b.expiresAt > now ? b.remaining : 0), 0);
}

/** Units an edge may hold beyond the request in hand: a small share of the limit. */
function spareCap(limit: number, unit = 1): number {
  return Math.min(Math.floor(limit / SPARE_DIVISOR), SPARE_MAX * unit);
}

function add(a: Wants, b: Wants, sign: 1 | -1): Wants {
  return {
    entries: a.entries + sign * b.entries,
    tokens: a.tokens + sign * b.tokens,
    slots: a.slots + sign * b.slots,
  };
}
