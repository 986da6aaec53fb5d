import { randomUUID } from 'node:crypto';
import {
  BLOCK_VALIDITY_MS,
  type Charge,
  type ReserveResult,
  type SeedReader,
  type Settlement,
  type SpendLedger,
} from './spend-ledger.js';

// One replica's blocks of holds (docs/architecture.md, "Spend blocks"): a hold taken in
// the ledger ahead of this replica's own demand, beside a request's, then carved into the
// worst cases of the requests that follow without asking Redis, for at most a second. A
// carved request is settled like any other, except that its amount goes back to the block
// instead of dropping a hold of its own; what the block did not carve goes back when it
// ends. In the ledger a block is one hold, so everything that bounds holds bounds blocks.

/**
 * A block holds at most this many requests (and, the ledger sees to it, at most a
 * sixteenth of the room left on any of its accounts).
 */
const SPARE_MAX_REQUESTS = 256;
/**
 * Below this many requests a second for the same accounts nothing is held ahead: a block
 * would cost a write to give back for each write it saved.
 */
const MIN_DEMAND = 4;
/**
 * A block is renewed once its rest falls to this share of it: the request in hand holds in
 * the ledger with the next block beside it, while the rest carries the requests that come
 * meanwhile, which would otherwise each hold in the ledger on their own.
 */
const RENEW_AT = 1 / 4;
/** How often ended blocks are given back and idle accounts forgotten. */
const SWEEP_MS = 250;

/** The part of a block one request holds. */
export interface CarvedHold {
  block: string;
  amount: number;
}

export type BlockReserveResult =
  /** Held on each account (less than asked: a partial hold); `carved` when from a block. */
  | { kind: 'held'; holds: number[]; carved?: CarvedHold }
  | { kind: 'refused'; index: number; available: number };

interface Block {
  id: string;
  size: number;
  remaining: number;
  expiresAt: number;
}

/** The accounts one set of requests pays from (a token's quota, its budgets, its balance). */
interface Payers {
  charges: Charge[];
  block: Block | null;
  /** A script asking for a block is in flight: concurrent misses ask for none. */
  asking: boolean;
  /** Reservations in the current and the previous second, for the block's size. */
  demandStart: number;
  demandCurrent: number;
  demandPrevious: number;
}

export class SpendBlocks {
  private readonly payers = new Map<string, Payers>();
  private readonly owner = randomUUID();
  private sequence = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly ledger: SpendLedger,
    /** Told when a block's rest could not be given back: it stays held until it expires. */
    private readonly giveBackFailed: (error: Error) => void = () => undefined,
  ) {
    this.sweeper = setInterval(() => this.sweep(Date.now()), SWEEP_MS).unref();
  }

  /**
   * Holds the request's worst case: carved from this replica's block for the same
   * accounts when it covers it, else in the ledger (with a new block beside it when the
   * demand is there).
   */
  async reserve(
    requestId: string,
    charges: Charge[],
    seed: SeedReader,
    now = Date.now(),
  ): Promise<BlockReserveResult> {
    const amount = charges[0]?.amount ?? 0;
    // A block is one amount on every account: requests charging accounts unalike hold alone.
    if (amount <= 0 || charges.some((charge) => charge.amount !== amount)) {
      return this.ledger.reserve(requestId, charges, seed, now);
    }
    const key = charges.map((charge) => charge.account).join(' ');
    let payers = this.payers.get(key);
    if (!payers) {
      payers = {
        charges,
        block: null,
        asking: false,
        demandStart: now,
        demandCurrent: 0,
        demandPrevious: 0,
      };
      this.payers.set(key, payers);
    }
    payers.charges = charges;
    countDemand(payers, now);
    const block = payers.block;
    const covers = block !== null && block.expiresAt > now && block.remaining >= amount;
    const spare = payers.asking ? 0 : spareFor(payers, amount);
    // Carved from the block while it covers the request, until its rest runs low: then the
    // request in hand asks for the next block, and the rest carries the requests that come
    // meanwhile, which would otherwise each hold in the ledger on their own.
    const renewing = covers && spare >= amount && block.remaining <= block.size * RENEW_AT;
    if (covers && !renewing) return carve(block, charges, amount);
    if (!renewing) {
      // Given back before the reservation below, on the same connection, so Redis counts
      // the rest as free when it weighs this request.
      if (block) this.retire(payers);
      if (spare < amount) return this.ledger.reserve(requestId, charges, seed, now);
    }
    // A renewal the ledger refused or held in part, or Redis did not answer: the request is
    // carved from the rest, as it would have been.
    const fallBack = () =>
      renewing && payers.block === block && block.remaining >= amount
        ? carve(block, charges, amount)
        : null;
    const id = `${this.owner}:${(this.sequence += 1)}`;
    payers.asking = true;
    let result: ReserveResult;
    try {
      result = await this.ledger.reserve(requestId, charges, seed, now, {
        id,
        spare,
        minimum: amount,
      });
    } catch (error) {
      const carved = fallBack();
      if (carved) return carved;
      throw error;
    } finally {
      payers.asking = false;
    }
    if (result.kind === 'refused') return fallBack() ?? result;
    // A renewal held in part (the room is nearly spent): the rest covers it whole instead.
    if (renewing && result.holds.some((held) => held < amount)) {
      const carved = fallBack();
      if (carved) {
        // Should Redis not take it, the hold expires as an edge's that died does.
        await this.ledger
          .release(
            requestId,
            charges.map((charge) => charge.account),
          )
          .catch(() => undefined);
        return carved;
      }
    }
    if (result.block !== undefined && result.block > 0) {
      this.install(key, payers, charges, id, result.block, now);
    }
    return { kind: 'held', holds: result.holds };
  }

  /** A block the ledger granted: this replica's, in place of the one before (its rest goes back). */
  private install(
    key: string,
    payers: Payers,
    charges: Charge[],
    id: string,
    size: number,
    now: number,
  ): void {
    // Asked before the accounts were forgotten (a reset, shutdown): not used, given back.
    if (this.payers.get(key) !== payers) {
      this.giveBack(charges, id, size);
      return;
    }
    this.retire(payers);
    payers.block = { id, size, remaining: size, expiresAt: now + BLOCK_VALIDITY_MS };
  }

  /**
   * A carved request that will not be settled (it failed before it was forwarded, or is
   * holding again at another price): its amount goes back to its block while the block is
   * in use here, else to the ledger's copy of it.
   */
  release(requestId: string, accounts: string[], carved: CarvedHold): Promise<void> {
    const block = this.payers.get(accounts.join(' '))?.block;
    if (block?.id === carved.block) {
      block.remaining += carved.amount;
      return Promise.resolve();
    }
    return this.ledger.settle(
      accounts.map((account) => ({
        account,
        total: null,
        requestIds: [],
        carves: [{ ...carved, requestId }],
      })),
    );
  }

  /** The account's spend changed outside usage (a reset, a new limit): its blocks go back. */
  forget(account: string): void {
    for (const [key, payers] of this.payers) {
      if (!payers.charges.some((charge) => charge.account === account)) continue;
      this.retire(payers);
      this.payers.delete(key);
    }
  }

  /** Gives every block's rest back (shutting down): another replica may spend it. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const rests: Settlement[] = [];
    for (const payers of this.payers.values()) {
      if (payers.block && payers.block.remaining > 0) {
        rests.push(...restOf(payers.charges, payers.block.id, payers.block.remaining));
      }
      payers.block = null;
    }
    this.payers.clear();
    if (rests.length > 0) await this.ledger.settle(rests);
  }

  private sweep(now: number): void {
    for (const [key, payers] of this.payers) {
      if (payers.block && payers.block.expiresAt <= now) this.retire(payers);
      if (!payers.block && !payers.asking && now - payers.demandStart > 2_000) {
        this.payers.delete(key);
      }
    }
  }

  private retire(payers: Payers): void {
    const block = payers.block;
    payers.block = null;
    if (block && block.remaining > 0) this.giveBack(payers.charges, block.id, block.remaining);
  }

  /**
   * Not retried: were a retry to follow a give-back whose reply was lost, the rest would
   * go back twice. What is not given back stays held until the block expires (over-counting,
   * never under).
   */
  private giveBack(charges: Charge[], block: string, amount: number): void {
    this.ledger
      .settle(restOf(charges, block, amount))
      .catch((error: unknown) => this.giveBackFailed(error as Error));
  }
}

function restOf(charges: Charge[], block: string, amount: number): Settlement[] {
  return charges.map(({ account }) => ({
    account,
    total: null,
    requestIds: [],
    carves: [{ block, amount, requestId: null }],
  }));
}

function carve(block: Block, charges: Charge[], amount: number): BlockReserveResult {
  block.remaining -= amount;
  return { kind: 'held', holds: charges.map(() => amount), carved: { block: block.id, amount } };
}

function countDemand(payers: Payers, now: number): void {
  const elapsed = now - payers.demandStart;
  if (elapsed >= 1_000) {
    payers.demandPrevious = elapsed >= 2_000 ? 0 : payers.demandCurrent;
    payers.demandCurrent = 0;
    payers.demandStart = now - (elapsed % 1_000);
  }
  payers.demandCurrent += 1;
}

/**
 * The block to ask for: about the requests of the last second (one validity's worth) at
 * this one's worst case, at most 256 of them; 0 below the demand worth a block.
 */
function spareFor(payers: Payers, amount: number): number {
  const demand = Math.max(payers.demandCurrent, payers.demandPrevious);
  if (demand < MIN_DEMAND) return 0;
  return Math.min(Math.ceil((demand * BLOCK_VALIDITY_MS) / 1_000), SPARE_MAX_REQUESTS) * amount;
}
