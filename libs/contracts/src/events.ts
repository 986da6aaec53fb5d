import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { ChannelOutcomeBatch, RoutingChange } from './routing.js';

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

/** A model's fallback lists changed (docs/routing.md, "Fallbacks across models"). */
export class ModelFallbackChangedEvent {
  @IsString() @MaxLength(128) model!: string;
  @IsIn(CHANGE_ACTIONS) action!: ChangeAction;
}

export class TokenExhaustedEvent {
  @IsInt() tokenId!: number;
  @IsString() keyHash!: string;
}

/**
 * A budget was created, changed or deleted (docs/budgets.md): edges read again the budgets
 * of the tokens it covers. `subject` as `Budget.subject` stores it (`token:42`,
 * `member:3:7`, `team:3`, `gateway`).
 */
export class BudgetChangedEvent {
  @IsString() @MaxLength(64) subject!: string;
  @IsIn(CHANGE_ACTIONS) action!: ChangeAction;
}

/**
 * A team changed: its billing, price group or members, or its balance was credited or
 * adjusted by an administrator or a redemption (not by requests' debits, which metering
 * settles in the spend ledger). Edges read its tokens again.
 */
export class TeamChangedEvent {
  @IsInt() teamId!: number;
  @IsIn(CHANGE_ACTIONS) action!: ChangeAction;
}

/** A price group's multiplier changed, or the group was made or removed. */
export class PriceGroupChangedEvent {
  @IsString() @MaxLength(64) name!: string;
}

export class RoutingChangedEvent {
  @ValidateNested() @Type(() => RoutingChange) change!: RoutingChange;
}

export const Events = {
  ChannelChanged: 'channel.changed',
  TokenChanged: 'token.changed',
  PriceChanged: 'price.changed',
  ModelFallbackChanged: 'model-fallback.changed',
  TokenExhausted: 'token.exhausted',
  BudgetChanged: 'budget.changed',
  TeamChanged: 'team.changed',
  PriceGroupChanged: 'price-group.changed',
  RoutingChanged: 'routing.changed',
  ChannelOutcomes: 'channel.outcome',
} as const;

export type EventName = (typeof Events)[keyof typeof Events];

export const EVENT_PAYLOADS = {
  [Events.ChannelChanged]: ChannelChangedEvent,
  [Events.TokenChanged]: TokenChangedEvent,
  [Events.PriceChanged]: PriceChangedEvent,
  [Events.ModelFallbackChanged]: ModelFallbackChangedEvent,
  [Events.TokenExhausted]: TokenExhaustedEvent,
  [Events.BudgetChanged]: BudgetChangedEvent,
  [Events.TeamChanged]: TeamChangedEvent,
  [Events.PriceGroupChanged]: PriceGroupChangedEvent,
  [Events.RoutingChanged]: RoutingChangedEvent,
  [Events.ChannelOutcomes]: ChannelOutcomeBatch,
} as const satisfies Record<EventName, new () => object>;

export type EventPayload<E extends EventName> = InstanceType<(typeof EVENT_PAYLOADS)[E]>;
