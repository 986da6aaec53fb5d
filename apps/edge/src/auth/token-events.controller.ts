import { Controller } from '@nestjs/common';
import {
  Events,
  type BudgetChangedEvent,
  type PriceGroupChangedEvent,
  type TeamChangedEvent,
  type TokenChangedEvent,
  type TokenExhaustedEvent,
} from '@switchyard/contracts';
import { OnEvent } from '@switchyard/messaging';
import { SpendBlocks, SpendLedger, spendAccount } from '@switchyard/spend';
import { TokenDirectory } from './token-directory.js';

/**
 * Keeps the token cache in step with admin changes (tokens, and what pays for them:
 * budgets, teams, price groups) and metering's quota settlement.
 */
@Controller()
export class TokenEventsController {
  constructor(
    private readonly directory: TokenDirectory,
    private readonly ledger: SpendLedger,
    private readonly blocks: SpendBlocks,
  ) {}

  @OnEvent(Events.TokenChanged)
  changed(event: TokenChangedEvent): void {
    this.directory.forget(event.keyHash);
    // An administrator may have reset the spend or the quota: this edge's block on it goes
    // back, and the ledger reads the spend again from Postgres. Without Redis the copy
    // expires on its own (docs/architecture.md, "Spend holds").
    const account = spendAccount('token', event.tokenId);
    this.blocks.forget(account);
    this.ledger.forget(account).catch(() => undefined);
  }

  @OnEvent(Events.TokenExhausted)
  exhausted(event: TokenExhaustedEvent): void {
    this.directory.markExhausted(event.keyHash);
  }

  /** A budget's amount or period changed: the tokens it covers read their budgets again. */
  @OnEvent(Events.BudgetChanged)
  budgetChanged(event: BudgetChangedEvent): void {
    const [level, first] = event.subject.split(':');
    const id = Number(first);
    if (level === 'token') this.directory.forgetWhere((token) => token.id === id);
    else if (level === 'member' || level === 'team')
      this.directory.forgetWhere((token) => token.teamId === id);
    else this.directory.forgetWhere(() => true);
  }

  /** Billing, price group or a credit to the balance (a new limit): its tokens are read again. */
  @OnEvent(Events.TeamChanged)
  teamChanged(event: TeamChangedEvent): void {
    this.directory.forgetWhere((token) => token.teamId === event.teamId);
  }

  @OnEvent(Events.PriceGroupChanged)
  priceGroupChanged(_event: PriceGroupChangedEvent): void {
    // Which tokens a group prices is a join the cache does not keep; groups change rarely.
    this.directory.forgetWhere(() => true);
  }
}
