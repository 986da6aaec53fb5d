import { EventEmitter } from 'node:events';
import { TokenStatus } from '@switchyard/db/sql';
import { type RedisClient } from '@switchyard/messaging';
import { Registry } from '@switchyard/observability';
import { MAX_UNKNOWN_TOKENS, TokenDirectory } from './token-directory.js';
import { type TokenRow, type TokensRepository } from './tokens.repository.js';

const row: TokenRow = {
  id: 1,
  keyHash: 'a'.repeat(64),
  status: TokenStatus.enabled,
  expiresAt: null,
  quotaSpent: false,
  hasQuota: false,
  quota: null,
  models: [],
  allowIps: [],
  group: 'default',
  rateLimit: null,
  teamId: null,
  ownerId: null,
  priceMultiplier: 1_000_000,
  balanceLimit: null,
  requestLog: false,
};

describe('TokenDirectory', () => {
  it('counts lookups answered from memory apart from those that waited for Postgres', async () => {
    let reads = 0;
    const tokens = {
      findByHash: (keyHash: string) => {
        reads += 1;
        return Promise.resolve(keyHash === row.keyHash ? row : undefined);
      },
      budgets: () => Promise.resolve([]),
    } as unknown as TokensRepository;
    const registry = new Registry();
    const directory = new TokenDirectory(
      tokens,
      new EventEmitter() as unknown as RedisClient,
      registry,
    );

    // Two lookups waiting on one read, then one from memory, then a token nobody issued.
    await Promise.all([directory.find(row.keyHash), directory.find(row.keyHash)]);
    expect(await directory.find(row.keyHash)).toMatchObject({ id: 1 });
    expect(await directory.find('b'.repeat(64))).toBeNull();

    expect(reads).toBe(2);
    const { values } = await registry.getSingleMetric('edge_token_lookups_total')!.get();
    expect(Object.fromEntries(values.map((v) => [v.labels.result, v.value]))).toEqual({
      hit: 1,
      miss: 2,
      unknown: 1,
    });
  });

  it('remembers at most MAX_UNKNOWN_TOKENS unknown tokens, forgetting the oldest first', async () => {
    let reads = 0;
    const tokens = {
      findByHash: () => {
        reads += 1;
        return Promise.resolve(undefined);
      },
      budgets: () => Promise.resolve([]),
    } as unknown as TokensRepository;
    const directory = new TokenDirectory(
      tokens,
      new EventEmitter() as unknown as RedisClient,
      new Registry(),
    );
    const hash = (i: number) => i.toString(16).padStart(64, '0');
    for (let i = 0; i < MAX_UNKNOWN_TOKENS; i += 1) await directory.find(hash(i));
    expect(reads).toBe(MAX_UNKNOWN_TOKENS);
    // All still remembered: none is read again.
    await directory.find(hash(0));
    await directory.find(hash(MAX_UNKNOWN_TOKENS - 1));
    expect(reads).toBe(MAX_UNKNOWN_TOKENS);
    // One more pushes out the oldest, which is read again; the newest is still remembered.
    await directory.find(hash(MAX_UNKNOWN_TOKENS));
    await directory.find(hash(0));
    expect(reads).toBe(MAX_UNKNOWN_TOKENS + 2);
    await directory.find(hash(MAX_UNKNOWN_TOKENS));
    expect(reads).toBe(MAX_UNKNOWN_TOKENS + 2);
    // A token issued since is forgotten as unknown when announced.
    directory.forget(hash(MAX_UNKNOWN_TOKENS));
    await directory.find(hash(MAX_UNKNOWN_TOKENS));
    expect(reads).toBe(MAX_UNKNOWN_TOKENS + 3);
  });
});
