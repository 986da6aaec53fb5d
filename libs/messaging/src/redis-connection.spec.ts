import {
  RedisConfigurationError,
  queuePrefixFor,
  redisConnectionOptions,
  redisDatabaseOf,
} from './redis-connection.js';
import { busConnectionOf } from './transport.js';

// The three forms of REDIS_URL (and REDIS_CLUSTER_NODES) as every client reads them. The
// clients on real Sentinels and a real cluster: test/scale/redis-topologies.spec.ts.

it('keeps the plain form as it is', () => {
  const url = 'redis://:secret@cache:6380/2';
  expect(redisConnectionOptions(url)).toEqual({ mode: 'standalone', url, options: {} });
  expect(busConnectionOf({ REDIS_URL: url, REDIS_PREFIX: 'sy' }).prefix).toBe('sy.db2');
});

it('reads Sentinels, the master name, the password and the database', () => {
  const connection = redisConnectionOptions(
    'redis+sentinel://:p%40ss@s1:26379,s2,[::1]:26380/mymaster/3',
  );
  expect(connection).toMatchObject({
    mode: 'sentinel',
    options: {
      password: 'p@ss',
      name: 'mymaster',
      db: 3,
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
        { host: '::1', port: 26380 },
      ],
    },
  });
  expect(redisDatabaseOf(connection)).toBe(3);
  expect(busConnectionOf({ REDIS_URL: 'redis+sentinel://s1/m/3', REDIS_PREFIX: 'sy' }).prefix).toBe(
    'sy.db3',
  );
});

it('reads cluster nodes, with credentials from REDIS_URL, and tags queue prefixes', () => {
  const connection = redisConnectionOptions('rediss://user:pw@ignored:6379', {
    REDIS_CLUSTER_NODES: 'n1:7000, n2:7001,n3',
  });
  expect(connection).toEqual({
    mode: 'cluster',
    nodes: [
      { host: 'n1', port: 7000 },
      { host: 'n2', port: 7001 },
      { host: 'n3', port: 6379 },
    ],
    options: { username: 'user', password: 'pw', tls: {} },
  });
  expect(queuePrefixFor(connection, 'sy:bull')).toBe('{sy:bull}');
  expect(queuePrefixFor(redisConnectionOptions('redis://x'), 'sy:bull')).toBe('sy:bull');
});

it.each([
  ['redis+sentinel://s1:26379', {}],
  ['redis+sentinel://s1:notaport/m', {}],
  ['http://x', {}],
  ['redis+sentinel://s1/m', { REDIS_CLUSTER_NODES: 'n1:7000' }],
  ['redis://x/2', { REDIS_CLUSTER_NODES: 'n1:7000' }],
])('refuses %s %j with a reason', (url, env) => {
  expect(() => redisConnectionOptions(url, env)).toThrow(RedisConfigurationError);
});
