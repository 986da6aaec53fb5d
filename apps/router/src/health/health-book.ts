import { type ChannelOutcome } from '@switchyard/contracts';

// What the router remembers about how upstreams behave, and the rules that turn outcomes
// into decisions (pure, with time passed in, so every rule is tested on its own):
// - an account answering 401/403 is banned: disable it;
// - an account answering 429 cools down, at once, for its Retry-After or an exponential
//   back-off, whichever is longer; a success resets the back-off;
// - a channel whose calls fail (5xx, timeouts, connection errors) more than half of the
//   time over the last minute (counted by whole seconds), at least three times, opens its
//   breaker until a probe succeeds.

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

/** A channel's calls and failures in one second of the window. */
interface Second {
  second: number;
  calls: number;
  failures: number;
}

interface Breaker {
  /**
   * The window by second, a ring indexed by second modulo its length: each outcome costs
   * the same however many calls the minute holds (a list of calls, trimmed from its front,
   * cost the router a copy of the whole minute per outcome at thousands a second).
   */
  seconds: Second[];
  openedAt: number | null;
}

const WINDOW_SECONDS = WINDOW_MS / 1_000;

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
    let breaker = this.breakers.get(channelId);
    if (!breaker) {
      const seconds = Array.from({ length: WINDOW_SECONDS }, () => ({
        second: -1,
        calls: 0,
        failures: 0,
      }));
      breaker = { seconds, openedAt: null };
      this.breakers.set(channelId, breaker);
    }
    const second = Math.floor(at / 1_000);
    const slot = breaker.seconds[second % WINDOW_SECONDS]!;
    // An outcome reported late, from a second the ring has moved past, is out of the window.
    if (slot.second > second) return null;
    if (slot.second < second) Object.assign(slot, { second, calls: 0, failures: 0 });
    slot.calls += 1;
    if (failed) slot.failures += 1;
    if (breaker.openedAt !== null || !failed) return null;
    let calls = 0;
    let failures = 0;
    for (const counted of breaker.seconds) {
      if (counted.second <= second - WINDOW_SECONDS) continue;
      calls += counted.calls;
      failures += counted.failures;
    }
    if (failures >= BREAKER_MIN_FAILURES && failures * 2 > calls) {
      breaker.openedAt = at;
      return { kind: 'breaker_opened', channelId, failures, calls };
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
