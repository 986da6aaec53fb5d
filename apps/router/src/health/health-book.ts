import { type ChannelOutcome } from '@switchyard/contracts';

// What the router remembers about how upstreams behave, and the rules that turn outcomes
// into decisions (pure, with time passed in, so every rule is tested on its own):
// - an account answering 401/403 is banned: disable it;
// - an account answering 429 cools down, at once, for its Retry-After or an exponential
//   back-off, whichever is longer; a success resets the back-off;
// - a channel whose calls fail (5xx, timeouts, connection errors) more than half of the
//   time over the last minute, at least three times, opens its breaker until a probe
//   succeeds.

export const COOLDOWN_BASE_MS = 2_000;
export const COOLDOWN_MAX_MS = 5 * 60_000;
const WINDOW_MS = 60_000;
const BREAKER_MIN_FAILURES = 3;

export type HealthChange =
  | { kind: 'key_banned'; channelId: number; keyId: number; detail: string }
  | { kind: 'key_cooling'; channelId: number; keyId: number; until: number }
  | { kind: 'breaker_opened'; channelId: number; failures: number; calls: number };

interface Cooldown {
  until: number;
  level: number;
}

interface Breaker {
  calls: { at: number; failed: boolean }[];
  openedAt: number | null;
}

export class HealthBook {
  private readonly cooldowns = new Map<number, Cooldown>();
  private readonly breakers = new Map<number, Breaker>();

  record(outcome: ChannelOutcome): HealthChange | null {
    switch (outcome.kind) {
      case 'ok':
      case 'client_error':
        this.cooldowns.delete(outcome.keyId);
        this.call(outcome.channelId, outcome.at, false);
        return null;
      case 'banned':
        return {
          kind: 'key_banned',
          channelId: outcome.channelId,
          keyId: outcome.keyId,
          detail: outcome.detail ?? `HTTP ${outcome.httpStatus ?? '401/403'}`,
        };
      case 'rate_limited':
        return this.coolDown(outcome);
      default:
        return this.call(outcome.channelId, outcome.at, true);
    }
  }

  private coolDown(outcome: ChannelOutcome): HealthChange {
    const previous = this.cooldowns.get(outcome.keyId);
    // Several edges report the same burst of 429s: one back-off step per cooldown.
    if (previous && previous.until > outcome.at) {
      return {
        kind: 'key_cooling',
        channelId: outcome.channelId,
        keyId: outcome.keyId,
        until: previous.until,
      };
    }
    const level = Math.min((previous?.level ?? 0) + 1, 20);
    const backoff = Math.min(COOLDOWN_BASE_MS * 2 ** (level - 1), COOLDOWN_MAX_MS);
    const until = outcome.at + Math.max(backoff, outcome.retryAfterMs ?? 0);
    this.cooldowns.set(outcome.keyId, { until, level });
    return { kind: 'key_cooling', channelId: outcome.channelId, keyId: outcome.keyId, until };
  }

  private call(channelId: number, at: number, failed: boolean): HealthChange | null {
    const breaker = this.breakers.get(channelId) ?? { calls: [], openedAt: null };
    this.breakers.set(channelId, breaker);
    breaker.calls.push({ at, failed });
    while (breaker.calls.length > 0 && breaker.calls[0]!.at <= at - WINDOW_MS)
      breaker.calls.shift();
    if (breaker.openedAt !== null || !failed) return null;
    const failures = breaker.calls.filter((c) => c.failed).length;
    if (failures >= BREAKER_MIN_FAILURES && failures * 2 > breaker.calls.length) {
      breaker.openedAt = at;
      return { kind: 'breaker_opened', channelId, failures, calls: breaker.calls.length };
    }
    return null;
  }

  coolingUntil(keyId: number, now: number): number | null {
    const cooldown = this.cooldowns.get(keyId);
    return cooldown && cooldown.until > now ? cooldown.until : null;
  }

  isOpen(channelId: number): boolean {
    return (this.breakers.get(channelId)?.openedAt ?? null) !== null;
  }

  /** Channels whose breaker has been open for at least `minimumMs`: due for a probe. */
  openBreakers(now: number, minimumMs: number): number[] {
    return [...this.breakers.entries()]
      .filter(([, breaker]) => breaker.openedAt !== null && now - breaker.openedAt >= minimumMs)
      .map(([channelId]) => channelId);
  }

  /** A probe succeeded: the channel takes traffic again, with a clean record. */
  closeBreaker(channelId: number): void {
    this.breakers.delete(channelId);
  }

  forgetKey(keyId: number): void {
    this.cooldowns.delete(keyId);
  }
}
