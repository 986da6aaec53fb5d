import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, ValidateNested } from 'class-validator';
import { ChannelOutcomeBatch, RoutingSnapshot } from './routing.js';

// Every event that crosses Redis pub/sub: its name and the class of its payload.
// Publishers and handlers use only these; payloads are validated on receipt.

export const CHANGE_ACTIONS = ['created', 'updated', 'deleted'] as const;
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];

export class ChannelChangedEvent {
  /** Absent when many channels changed at once (bulk import). */
  @IsOptional() @IsInt() channelId?: number;
  @IsIn(CHANGE_ACTIONS) action!: ChangeAction;
}

export class TokenChangedEvent {
  @IsInt() tokenId!: number;
  /** The hash the edges cache the token under. */
  @IsString() keyHash!: string;
  @IsIn(CHANGE_ACTIONS) action!: ChangeAction;
}

export class PriceChangedEvent {
  @IsOptional() @IsString() model?: string;
}

export class TokenExhaustedEvent {
  @IsInt() tokenId!: number;
  @IsString() keyHash!: string;
}

export class RoutingSnapshotEvent {
  @ValidateNested() @Type(() => RoutingSnapshot) snapshot!: RoutingSnapshot;
}

export const Events = {
  ChannelChanged: 'channel.changed',
  TokenChanged: 'token.changed',
  PriceChanged: 'price.changed',
  TokenExhausted: 'token.exhausted',
  RoutingSnapshot: 'routing.snapshot',
  ChannelOutcomes: 'channel.outcome',
} as const;

export type EventName = (typeof Events)[keyof typeof Events];

export const EVENT_PAYLOADS = {
  [Events.ChannelChanged]: ChannelChangedEvent,
  [Events.TokenChanged]: TokenChangedEvent,
  [Events.PriceChanged]: PriceChangedEvent,
  [Events.TokenExhausted]: TokenExhaustedEvent,
  [Events.RoutingSnapshot]: RoutingSnapshotEvent,
  [Events.ChannelOutcomes]: ChannelOutcomeBatch,
} as const satisfies Record<EventName, new () => object>;

export type EventPayload<E extends EventName> = InstanceType<(typeof EVENT_PAYLOADS)[E]>;
