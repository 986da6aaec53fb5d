import { Controller } from '@nestjs/common';
import { Events, type TokenChangedEvent, type TokenExhaustedEvent } from '@switchyard/contracts';
import { OnEvent } from '@switchyard/messaging';
import { TokenDirectory } from './token-directory.js';

/** Keeps the token cache in step with admin changes and metering's quota settlement. */
@Controller()
export class TokenEventsController {
  constructor(private readonly directory: TokenDirectory) {}

  @OnEvent(Events.TokenChanged)
  changed(event: TokenChangedEvent): void {
    this.directory.forget(event.keyHash);
  }

  @OnEvent(Events.TokenExhausted)
  exhausted(event: TokenExhaustedEvent): void {
    this.directory.markExhausted(event.keyHash);
  }
}
