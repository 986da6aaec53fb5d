import {
  APP_ENVIRONMENTS,
  EdgeEnv,
  MeteringEnv,
  MockUpstreamEnv,
  StoreEnv,
} from './environment.js';
import {
  ConfigurationError,
  knownEnvironmentVariables,
  loadEnvironment,
} from './load-environment.js';

const secretKeys = `k1:${Buffer.alloc(32, 7).toString('base64')}`;

describe('loadEnvironment', () => {
  it('applies defaults and converts types', () => {
    const env = loadEnvironment(EdgeEnv, {
      SECRET_KEYS: secretKeys,
      EDGE_PORT: '3100',
      TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1',
    });
    expect(env.EDGE_PORT).toBe(3100);
    expect(env.TRUSTED_PROXIES).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(env.SECRET_KEYS).toEqual([secretKeys]);
    expect(env.DATABASE_URL).toBe('postgresql://postgres@127.0.0.1:5432/switchyard');
    expect(env.LOG_LEVEL).toBe('info');
  });

  it('stops with one line naming each bad variable and what it expects', () => {
    const attempt = () =>
      loadEnvironment(EdgeEnv, {
        SECRET_KEYS: secretKeys,
        EDGE_PORT: 'eighty',
        REDIS_URL: 'http://x',
      });
    expect(attempt).toThrow(ConfigurationError);
    expect(attempt).toThrow(
      'Invalid configuration: EDGE_PORT must be an integer from 1 to 65535 (got "eighty"); REDIS_URL must be a URL starting with redis://, rediss:// or redis+sentinel:// (got "http://x")',
    );
    expect(() =>
      loadEnvironment(EdgeEnv, { SECRET_KEYS: secretKeys, EDGE_PORT: 'eighty' }),
    ).toThrow(/^[^\n]+$/);
  });

  it('says when a required variable is missing', () => {
    expect(() => loadEnvironment(EdgeEnv, {})).toThrow(
      /SECRET_KEYS must be a comma-separated list of id:base64 keys of 32 bytes \(it is not set\)/,
    );
  });

  it('refuses a malformed list item, a port out of range and an unknown log level', () => {
    expect(() => loadEnvironment(MockUpstreamEnv, { MOCK_ACCOUNTS: 'good,bad key' })).toThrow(
      /MOCK_ACCOUNTS/,
    );
    expect(() => loadEnvironment(MockUpstreamEnv, { MOCK_UPSTREAM_PORT: '70000' })).toThrow(
      /MOCK_UPSTREAM_PORT must be an integer from 1 to 65535/,
    );
    expect(() => loadEnvironment(StoreEnv, { LOG_LEVEL: 'loud' })).toThrow(
      /LOG_LEVEL must be one of fatal, error/,
    );
  });

  it('ignores variables the app does not read', () => {
    expect(loadEnvironment(StoreEnv, { EDGE_PORT: 'not read here' })).not.toHaveProperty(
      'EDGE_PORT',
    );
  });
});

describe('budget variables (docs/budgets.md, "Configuration")', () => {
  it('takes an IANA time zone, UTC by default, and refuses an unknown one', () => {
    expect(loadEnvironment(EdgeEnv, { SECRET_KEYS: secretKeys }).BUDGET_TIME_ZONE).toBe('UTC');
    expect(
      loadEnvironment(MeteringEnv, { BUDGET_TIME_ZONE: 'Europe/Berlin' }).BUDGET_TIME_ZONE,
    ).toBe('Europe/Berlin');
    expect(() => loadEnvironment(MeteringEnv, { BUDGET_TIME_ZONE: 'Mars/Olympus' })).toThrow(
      'BUDGET_TIME_ZONE must be an IANA time zone such as UTC or Europe/Berlin (got "Mars/Olympus")',
    );
  });

  it('wants a webhook secret of 16 characters or more with the webhook URL', () => {
    expect(() =>
      loadEnvironment(MeteringEnv, { BUDGET_WEBHOOK_URL: 'https://hooks.example.com/b' }),
    ).toThrow('BUDGET_WEBHOOK_SECRET must be a secret of 16 characters or more');
    expect(() =>
      loadEnvironment(MeteringEnv, {
        BUDGET_WEBHOOK_URL: 'https://hooks.example.com/b',
        BUDGET_WEBHOOK_SECRET: 'short',
      }),
    ).toThrow('BUDGET_WEBHOOK_SECRET');
    const env = loadEnvironment(MeteringEnv, {
      BUDGET_WEBHOOK_URL: 'https://hooks.example.com/b',
      BUDGET_WEBHOOK_SECRET: 'sixteen-chars-ok',
    });
    expect(env.BUDGET_WEBHOOK_SECRET).toBe('sixteen-chars-ok');
    expect(loadEnvironment(MeteringEnv, {}).BUDGET_WEBHOOK_URL).toBeUndefined();
  });

  it('refuses the test clock in production', () => {
    expect(
      loadEnvironment(EdgeEnv, { SECRET_KEYS: secretKeys, TEST_CLOCK_FILE: '/tmp/offset' })
        .TEST_CLOCK_FILE,
    ).toBe('/tmp/offset');
    expect(() =>
      loadEnvironment(EdgeEnv, {
        SECRET_KEYS: secretKeys,
        NODE_ENV: 'production',
        TEST_CLOCK_FILE: '/tmp/offset',
      }),
    ).toThrow('TEST_CLOCK_FILE must be unset in production');
    expect(
      loadEnvironment(EdgeEnv, { SECRET_KEYS: secretKeys, NODE_ENV: 'production' }).TEST_CLOCK_FILE,
    ).toBeUndefined();
  });
});

describe('knownEnvironmentVariables', () => {
  it('lists every variable of every app, with the apps that read it', () => {
    const known = knownEnvironmentVariables();
    expect(known.get('EDGE_PORT')).toEqual(['edge']);
    expect(known.get('DATABASE_URL')).toEqual(
      expect.arrayContaining(['edge', 'router', 'admin', 'chat', 'metering']),
    );
    expect(known.get('DATABASE_URL')).not.toContain('web');
    expect(new Set([...known.values()].flat())).toEqual(new Set(Object.keys(APP_ENVIRONMENTS)));
  });
});
