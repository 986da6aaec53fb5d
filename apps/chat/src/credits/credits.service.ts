import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { type CreditEntry, type CreditKind } from '@switchyard/db';
import { skipTake } from '@switchyard/service';
import { type Principal } from '../auth/principal.js';
import {
  type AdjustCreditsDto,
  type BalanceResponse,
  type CreditEntryResponse,
  type LedgerPageResponse,
  type LedgerQuery,
} from './credits.dto.js';
import { ChatSettingsService } from '../settings/chat-settings.service.js';
import { CreditsRepository, type CreditChange } from './credits.repository.js';
import { costOf, isFree, worstCase, type CreditPrice } from './pricing.js';

/** Credits frozen for one reply, until it is settled. */
export interface CreditHold {
  requestId: string;
  userId: number;
  conversationId: string | null;
  price: CreditPrice;
  frozen: number;
}

/** What a reply is about to send, for its worst-case cost. */
export interface PromptSize {
  texts: string[];
  images: number;
}

export function toEntry(entry: CreditEntry): CreditEntryResponse {
  return {
    id: Number(entry.id),
    kind: entry.kind,
    amount: entry.amount,
    balanceAfter: entry.balanceAfter,
    reason: entry.reason,
    actorId: entry.actorId,
    requestId: entry.requestId,
    conversationId: entry.conversationId,
    createdAt: entry.createdAt.toISOString(),
  };
}

@Injectable()
export class CreditsService {
  private readonly logger = new Logger(CreditsService.name);

  constructor(
    private readonly credits: CreditsRepository,
    private readonly settings: ChatSettingsService,
  ) {}

  async balance(principal: Principal): Promise<BalanceResponse> {
    return { balance: (await this.credits.balanceOf(principal.id)) ?? 0 };
  }

  /** A user's ledger; the caller decides whose (their own, or any for an administrator). */
  async ledger(userId: number, query: LedgerQuery): Promise<LedgerPageResponse> {
    const { skip, take } = skipTake(query);
    const balance = await this.credits.balanceOf(userId);
    if (balance === null) throw new ApiError('not_found', `No user with id ${userId}`);
    const page = await this.credits.entries(userId, query.kind, skip, take);
    return { items: page.rows.map(toEntry), total: page.total, balance };
  }

  /** An administrator's change; refused below zero unless forced. */
  async adjust(
    actor: Principal,
    userId: number,
    dto: AdjustCreditsDto,
  ): Promise<CreditEntryResponse> {
    const result = await this.credits.change({
      userId,
      kind: 'adjust',
      amount: dto.amount,
      reason: dto.reason,
      actorId: actor.id,
      allowNegative: dto.force === true,
    });
    if (!result.ok) {
      if (result.reason === 'no_user') throw new ApiError('not_found', `No user with id ${userId}`);
      throw new ApiError(
        'balance_below_zero',
        `This would take the balance from ${result.balance} to ${(result.balance ?? 0) + dto.amount}; send force: true to allow a negative balance`,
        undefined,
        { details: { balance: result.balance ?? 0, amount: dto.amount } },
      );
    }
    this.logger.log({ message: 'credits adjusted', userId, by: actor.id, amount: dto.amount });
    return toEntry(result.entry);
  }

  /** The welcome grant of a newly registered user. */
  async grantAtRegistration(userId: number): Promise<void> {
    const registrationGrant = await this.settings.registrationGrant();
    if (registrationGrant === 0) return;
    await this.apply({ userId, kind: 'grant', amount: registrationGrant, reason: 'registration' });
  }

  /** Any change the code makes itself (the tests' random operations use it too). */
  async apply(change: CreditChange): Promise<number | null> {
    const result = await this.credits.change(change);
    return result.ok ? result.balance : null;
  }

  /**
   * Freezes the reply's worst-case cost, or throws 402 `insufficient_credits` before
   * anything reaches the gateway. Free models freeze nothing (null). `what` says what the
   * reply is for in the ledger (a conversation's reply, an A2A task).
   */
  async freeze(
    userId: number,
    conversationId: string | null,
    model: string,
    price: CreditPrice,
    prompt: PromptSize,
    what = 'reply',
  ): Promise<CreditHold | null> {
    if (isFree(price)) return null;
    const frozen = worstCase(price, prompt.texts, prompt.images);
    const requestId = randomUUID();
    const result = await this.credits.freeze({
      userId,
      kind: 'spend',
      amount: -frozen,
      reason: `${what} by ${model} (frozen)`,
      requestId,
      conversationId,
      model,
    });
    if (!result.ok) {
      const balance = result.balance ?? 0;
      throw new ApiError(
        'insufficient_credits',
        `This message may cost up to ${frozen} credits and your balance is ${balance}; redeem a code to add credits`,
        undefined,
        { details: { balance, price: frozen } },
      );
    }
    return { requestId, userId, conversationId, price, frozen };
  }

  /**
   * Returns what the reply did not use: everything when it failed, was cancelled or
   * refused; otherwise the frozen amount less the cost of its usage (never more than was
   * frozen, so a reply costs at most its freeze). Without usage the freeze is kept. A hold
   * the sweeper already returned is left alone (false).
   */
  async settle(
    hold: CreditHold,
    usage: { promptTokens: number; completionTokens: number } | null,
    succeeded: boolean,
  ): Promise<boolean> {
    const cost = !succeeded
      ? 0
      : usage
        ? Math.min(hold.frozen, costOf(hold.price, usage.promptTokens, usage.completionTokens))
        : hold.frozen;
    const back = hold.frozen - cost;
    const settled = await this.credits.release(
      hold.requestId,
      back === 0
        ? null
        : {
            userId: hold.userId,
            kind: 'refund',
            amount: back,
            reason: succeeded
              ? `unused part of the freeze (cost ${cost})`
              : 'reply failed: freeze returned',
            requestId: hold.requestId,
            conversationId: hold.conversationId,
          },
    );
    if (!settled) {
      this.logger.warn({
        message: 'credits settled after the sweeper returned the freeze',
        requestId: hold.requestId,
        userId: hold.userId,
      });
    }
    return settled;
  }
}

export type { CreditKind };
