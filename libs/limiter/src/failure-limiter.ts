import type { Cluster, Redis } from 'ioredis';

// Failed tries of something guessable (a redemption code), counted in Redis per who tries
// and per where from, shared by every replica: chat credit codes (docs/credits.md) and team
// balance codes (docs/teams.md) both go through it. Each try is charged as a failure when it
// is let through and refunded when it worked, so tries sent at once cannot all slip under
// the limit together. A fixed window: the counts start over `windowSeconds` after the first
// failure.

export interface FailureCount {
  /** The Redis key (inside the installation's prefix) of one count. */
  key: string;
  /** Failures allowed within the window; the next try is refused. */
  max: number;
}

/** A try let through: `succeeded` when it worked, nothing otherwise. */
export interface FailureAttempt {
  succeeded(): Promise<void>;
}

export class FailureLimiter {
  constructor(
    private readonly redis: Redis | Cluster,
    readonly windowSeconds: number,
  ) {}

  /** Charges one failure to each count; null when any is over its limit (the try is refused). */
  async begin(counts: FailureCount[]): Promise<FailureAttempt | null> {
    const pipeline = this.redis.multi();
    for (const { key } of counts) {
      pipeline.incr(key);
      pipeline.expire(key, this.windowSeconds, 'NX');
    }
    const replies = (await pipeline.exec()) ?? [];
    const over = counts.some(({ max }, i) => Number(replies[i * 2]?.[1] ?? 0) > max);
    if (over) return null;
    return {
      succeeded: async () => {
        const refund = this.redis.multi();
        for (const { key } of counts) refund.decr(key);
        await refund.exec();
      },
    };
  }
}
