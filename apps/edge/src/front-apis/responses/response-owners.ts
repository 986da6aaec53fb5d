import { Inject, Injectable, Logger } from '@nestjs/common';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { type RoutedExchange } from '../../proxy/exchange.js';
import { type Answered } from '../../proxy/failover.js';

// Which channel, upstream key and gateway token created a stored Response
// (docs/providers.md, "Stored responses"). OpenAI keeps a Response in the project of the
// key that created it, so its follow-ups (read, delete, cancel, input items) must go back to
// that very key: any other answers 404. The record lives in Redis, shared by every edge
// replica, for as long as OpenAI keeps the Response (30 days by default); after that both
// are gone and the follow-up is a 404 either way.

/** OpenAI's retention of stored Responses: 30 days (its data-controls documentation). */
export const RESPONSE_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export interface ResponseOwner {
  channelId: number;
  keyId: number;
  tokenId: number;
  /** The model the client asked for, and the name the channel sent upstream (usage rows). */
  model: string;
  upstreamModel: string;
}

const keyOf = (responseId: string): string => `responses:owner:${responseId}`;

@Injectable()
export class ResponseOwners {
  private readonly logger = new Logger('ResponseOwners');

  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  /**
   * Records the owner of a Response. A failure is logged, not thrown: the answer is still
   * the client's, only its follow-ups will be refused (404).
   */
  async remember(responseId: string, owner: ResponseOwner): Promise<void> {
    try {
      await this.redis.set(keyOf(responseId), JSON.stringify(owner), 'PX', RESPONSE_RETENTION_MS);
    } catch (error) {
      this.logger.warn(
        `the owner of response ${responseId} was not recorded: ${(error as Error).message}`,
      );
    }
  }

  /**
   * Records who made the answer when the upstream stored it (`storedId`): a whole answer
   * before it is relayed, so a client that polls right after reading it finds the record; a
   * stream as soon as an event names its id (`response.created`, its first), without
   * holding the stream.
   */
  async track(exchange: RoutedExchange, answered: Answered): Promise<void> {
    const { answer, attempt } = answered;
    if (!answer.storedId) return;
    const owner: ResponseOwner = {
      channelId: attempt.candidate.channel.id,
      keyId: attempt.candidate.key.id,
      tokenId: exchange.token.id,
      model: exchange.body.model,
      upstreamModel: attempt.candidate.upstreamModel,
    };
    if (answer.kind === 'whole') {
      await this.remember(answer.storedId, owner);
      return;
    }
    const storedId = answer.storedId;
    const rest = answer.rest;
    let recorded = false;
    const check = (): void => {
      const id = recorded ? null : storedId();
      if (id === null) return;
      recorded = true;
      void this.remember(id, owner);
    };
    check();
    if (recorded) return;
    answer.rest = {
      next: async () => {
        const next = await rest.next();
        check();
        return next;
      },
      ...(rest.return ? { return: (value?: unknown) => rest.return!(value) } : {}),
    };
  }

  async find(responseId: string): Promise<ResponseOwner | null> {
    const stored = await this.redis.get(keyOf(responseId));
    return stored ? (JSON.parse(stored) as ResponseOwner) : null;
  }

  async forget(responseId: string): Promise<void> {
    await this.redis.del(keyOf(responseId));
  }
}
