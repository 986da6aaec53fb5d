import { Controller } from '@nestjs/common';
import {
  Events,
  Messages,
  type ChannelChangedEvent,
  type ChannelOutcomeBatch,
  type RoutingSnapshot,
} from '@switchyard/contracts';
import { OnEvent, OnMessage } from '@switchyard/messaging';
import { RoutingAuthority } from './routing-authority.js';

@Controller()
export class RoutingController {
  constructor(private readonly authority: RoutingAuthority) {}

  @OnMessage(Messages.GetRoutingSnapshot)
  snapshot(): Promise<RoutingSnapshot> {
    return this.authority.current();
  }

  @OnEvent(Events.ChannelChanged)
  async channelChanged(event: ChannelChangedEvent): Promise<void> {
    if (event.channelId === undefined) await this.authority.reload();
    else await this.authority.reloadChannel(event.channelId);
  }

  @OnEvent(Events.ChannelOutcomes)
  async outcomes(batch: ChannelOutcomeBatch): Promise<void> {
    await this.authority.handleOutcomes(batch.outcomes);
  }
}
