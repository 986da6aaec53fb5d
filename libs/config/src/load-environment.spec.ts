import { APP_ENVIRONMENTS, EdgeEnv, MockUpstreamEnv, StoreEnv } from './environment.js';
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
      'Invalid configuration: EDGE_PORT must be an integer from 1 to 65535 (got "eighty"); REDIS_URL must be a URL starting with redis:// or rediss:// (got "http://x")',
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
