import { Injectable } from '@nestjs/common';

// The edge's own breaker for channels that hang. The router opens its breaker only after
// several failures in a minute, from every edge's reports; until then each request would
// wait a full first-byte timeout on the same silent channel. One timeout here takes the
// channel out of this edge's picks for a while, so only the first request pays the wait.

/** How long a channel that timed out is skipped; then one request tries it again. */
export const BREAKER_OPEN_MS = 30_000;

@Injectable()
export class ChannelBreaker {
  /** Channel id → when it may be tried again. */
  private readonly openUntil = new Map<number, number>();

  trip(channelId: number, now = Date.now()): void {
    this.openUntil.set(channelId, now + BREAKER_OPEN_MS);
  }

  /** The channels this edge skips now; a fresh set the request may add to. */
  openChannels(now = Date.now()): Set<number> {
    const open = new Set<number>();
    if (this.openUntil.size === 0) return open;
    for (const [channelId, until] of this.openUntil) {
      if (until > now) open.add(channelId);
      // Half-open: the next request tries it; a new timeout trips it again.
      else this.openUntil.delete(channelId);
    }
    return open;
  }
}
