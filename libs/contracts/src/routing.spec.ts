import { isRetryableOutcome, outcomeOfStatus } from './routing.js';

describe('upstream outcomes', () => {
  it.each([
    [200, 'ok', false],
    [401, 'banned', true],
    [403, 'banned', true],
    [429, 'rate_limited', true],
    [408, 'server_error', true],
    [500, 'server_error', true],
    [503, 'server_error', true],
    [400, 'client_error', false],
    [404, 'client_error', false],
  ] as const)('classifies upstream status %i as %s (retry: %s)', (status, kind, retry) => {
    expect(outcomeOfStatus(status)).toBe(kind);
    expect(isRetryableOutcome(kind)).toBe(retry);
  });
});
