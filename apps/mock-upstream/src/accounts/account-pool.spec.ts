import { AccountPool, parseAccountSpec } from './account-pool.js';

describe('AccountPool', () => {
  const minute = 60_000;

  it('parses key[:rpm[:tpm[:banned]]]', () => {
    expect(parseAccountSpec('sk-a')).toEqual({
      key: 'sk-a',
      rpm: 0,
      tpm: 0,
      concurrency: 0,
      banned: false,
    });
    expect(parseAccountSpec('sk-b:5:1000:banned')).toEqual({
      key: 'sk-b',
      rpm: 5,
      tpm: 1000,
      concurrency: 0,
      banned: true,
    });
  });

  it('refuses unknown and banned keys', () => {
    const pool = new AccountPool([parseAccountSpec('sk-banned:0:0:banned')]);
    expect(pool.admit('sk-nobody', 1).kind).toBe('unknown');
    expect(pool.admit(undefined, 1).kind).toBe('unknown');
    expect(pool.admit('sk-banned', 1).kind).toBe('banned');
  });

  it('holds requests per minute over a sliding window', () => {
    const pool = new AccountPool([parseAccountSpec('sk-a:2')]);
    const t0 = 1_000_000;
    expect(pool.admit('sk-a', 1, t0).kind).toBe('admitted');
    expect(pool.admit('sk-a', 1, t0 + 10).kind).toBe('admitted');
    const refused = pool.admit('sk-a', 1, t0 + minute - 1);
    expect(refused).toMatchObject({ kind: 'limited', limit: 'requests', retryAfterSeconds: 1 });
    expect(pool.admit('sk-a', 1, t0 + minute + 1).kind).toBe('admitted');
    expect(pool.stats()[0]).toMatchObject({ requests: 4, rateLimited: 1, maxRequestsPerWindow: 2 });
  });

  it('holds tokens per minute, counting prompt and completion', () => {
    const pool = new AccountPool([parseAccountSpec('sk-a:0:100')]);
    const first = pool.admit('sk-a', 40, 0);
    if (first.kind !== 'admitted') throw new Error('expected admission');
    first.lease.finish('served', 50);
    expect(pool.admit('sk-a', 20, 1).kind).toBe('limited');
    expect(pool.admit('sk-a', 10, 2).kind).toBe('admitted');
  });

  it('holds concurrency and records the most requests in flight', () => {
    const pool = new AccountPool([{ key: 'sk-a', rpm: 0, tpm: 0, concurrency: 1, banned: false }]);
    const first = pool.admit('sk-a', 1);
    expect(pool.admit('sk-a', 1)).toMatchObject({ kind: 'limited', limit: 'concurrency' });
    if (first.kind !== 'admitted') throw new Error('expected admission');
    first.lease.finish('served', 1);
    first.lease.finish('served', 1);
    expect(pool.admit('sk-a', 1).kind).toBe('admitted');
    expect(pool.stats()[0]).toMatchObject({ maxInFlight: 1, served: 1 });
  });
});
