import { type ChannelOutcome } from '@switchyard/contracts';
import { COOLDOWN_BASE_MS, HealthBook } from './health-book.js';

function outcome(
  kind: ChannelOutcome['kind'],
  at: number,
  extra: Partial<ChannelOutcome> = {},
): ChannelOutcome {
  return { channelId: 1, keyId: 10, kind, latencyMs: 5, at, ...extra };
}

describe('HealthBook', () => {
  it('bans an account that answers 401 or 403', () => {
    const book = new HealthBook();
    expect(book.record(outcome('banned', 0, { httpStatus: 401, detail: 'deactivated' }))).toEqual({
      kind: 'key_banned',
      channelId: 1,
      keyId: 10,
      detail: 'deactivated',
    });
  });

  it('cools an account down at once on 429, with growing back-off, reset by a success', () => {
    const book = new HealthBook();
    expect(book.record(outcome('rate_limited', 0))).toMatchObject({ until: COOLDOWN_BASE_MS });
    expect(book.coolingUntil(10, 1)).toBe(COOLDOWN_BASE_MS);
    // Reports of the same burst from other edges do not stretch it.
    expect(book.record(outcome('rate_limited', 10))).toMatchObject({ until: COOLDOWN_BASE_MS });
    expect(book.record(outcome('rate_limited', COOLDOWN_BASE_MS + 1))).toMatchObject({
      until: COOLDOWN_BASE_MS + 1 + 2 * COOLDOWN_BASE_MS,
    });
    book.record(outcome('ok', 10_000));
    expect(book.coolingUntil(10, 10_001)).toBeNull();
    expect(book.record(outcome('rate_limited', 20_000))).toMatchObject({
      until: 20_000 + COOLDOWN_BASE_MS,
    });
  });

  it("honours the upstream's Retry-After when it is longer than the back-off", () => {
    const book = new HealthBook();
    expect(book.record(outcome('rate_limited', 0, { retryAfterMs: 30_000 }))).toMatchObject({
      until: 30_000,
    });
  });

  it('opens the breaker when most calls of the last minute fail, at least three times', () => {
    const book = new HealthBook();
    expect(book.record(outcome('ok', 0))).toBeNull();
    expect(book.record(outcome('server_error', 1))).toBeNull();
    expect(book.record(outcome('timeout', 2))).toBeNull();
    expect(book.record(outcome('ok', 3))).toBeNull();
    // 3 failures of 5 calls: more than half.
    expect(book.record(outcome('connect_error', 4))).toEqual({
      kind: 'breaker_opened',
      channelId: 1,
      failures: 3,
      calls: 5,
    });
    expect(book.isOpen(1)).toBe(true);
    expect(book.openBreakers(5, 10)).toEqual([]);
    expect(book.openBreakers(20, 10)).toEqual([1]);
    book.closeBreaker(1);
    expect(book.isOpen(1)).toBe(false);
  });

  it('keeps the breaker closed when failures are old or rare', () => {
    const book = new HealthBook();
    book.record(outcome('server_error', 0));
    book.record(outcome('server_error', 1));
    expect(book.record(outcome('server_error', 70_000))).toBeNull();
    for (let i = 0; i < 5; i += 1) book.record(outcome('ok', 70_001 + i));
    expect(book.record(outcome('server_error', 70_010))).toBeNull();
    expect(book.isOpen(1)).toBe(false);
  });

  it('counts a busy minute by its seconds: many calls outweigh a few failures until they leave the window', () => {
    const book = new HealthBook();
    // A minute of 200,000 calls, one every 0.3 ms.
    for (let i = 0; i < 200_000; i += 1) book.record(outcome('ok', Math.floor(i * 0.3)));
    for (let i = 0; i < 5; i += 1)
      expect(book.record(outcome('server_error', 60_000 + i))).toBeNull();
    // A minute later every success has left the window: the failures are most of it.
    for (let i = 0; i < 2; i += 1)
      expect(book.record(outcome('server_error', 125_000 + i))).toBeNull();
    expect(book.record(outcome('timeout', 125_002))).toEqual({
      kind: 'breaker_opened',
      channelId: 1,
      failures: 3,
      calls: 3,
    });
  });

  it('treats a client error as a working channel', () => {
    const book = new HealthBook();
    for (let i = 0; i < 10; i += 1) expect(book.record(outcome('client_error', i))).toBeNull();
    expect(book.isOpen(1)).toBe(false);
  });
});
