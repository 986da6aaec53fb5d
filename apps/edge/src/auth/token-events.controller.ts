import { Controller } from '@nestjs/common';
import { Events, type TokenChangedEvent, type TokenExhaustedEvent } from '@switchyard/contracts';
import { OnEvent } from '@switchyard/messaging';
import { SpendLedger, spendAccount } from '@switchyard/spend';
import { TokenDirectory } from './token-directory.js';

/** Keeps the token cache in step with admin changes and metering's quota settlement. */
@Controller()
export class TokenEventsController {
  constructor(
    private readonly directory: TokenDirectory,
    private readonly ledger: SpendLedger,
  ) {}

  @OnEvent(Events.TokenChanged)
  changed(event: TokenChangedEvent): void {
    this.directory.forget(event.keyHash);
    // An administrator may have reset the spend: the ledger reads it again from Postgres.
    // Without Redis the copy expires on its own (docs/architecture.md, "Spend holds").
    this.ledger.forget(spendAccount('token', event.tokenId)).catch(() => undefined);
  }

  @OnEvent(Events.TokenExhausted)
  exhausted(event: TokenExhaustedEvent): void {
    this.directory.markExhausted(event.keyHash);
  }
}
