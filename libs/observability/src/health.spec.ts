import { Registry } from 'prom-client';
import { HealthService, type ReadinessCheck } from './health.js';

function check(name: string, behaviour: () => Promise<void>): ReadinessCheck {
  return { name, check: behaviour };
}

describe('HealthService', () => {
  it('is ready when every dependency answers', async () => {
    const health = new HealthService([
      check('postgres', () => Promise.resolve()),
      check('redis', () => Promise.resolve()),
    ]);
    expect(await health.readiness()).toEqual({
      status: 'ok',
      checks: { postgres: { status: 'ok' }, redis: { status: 'ok' } },
    });
  });

  it('reports the failing dependency with the last line of its error', async () => {
    const health = new HealthService([
      check('postgres', () =>
        Promise.reject(new Error("Invalid call\n\nCan't reach database server")),
      ),
      check('redis', () => Promise.resolve()),
    ]);
    expect(await health.readiness()).toEqual({
      status: 'unavailable',
      checks: {
        postgres: { status: 'unavailable', error: "Can't reach database server" },
        redis: { status: 'ok' },
      },
    });
  });

  it('gives up on a dependency that does not answer', async () => {
    const health = new HealthService([check('slow', () => new Promise(() => undefined))]);
    expect((await health.readiness()).checks.slow).toEqual({
      status: 'unavailable',
      error: 'no answer within 2000 ms',
    });
  }, 5_000);

  it('stops being ready once shutdown begins', async () => {
    const health = new HealthService([]);
    health.beforeApplicationShutdown();
    expect((await health.readiness()).status).toBe('unavailable');
  });
});

describe('dependency_up', () => {
  it('reads each dependency at scrape time, 1 when it answers and 0 when it does not', async () => {
    const registry = new Registry();
    let redisAnswers = true;
    new HealthService(
      [
        check('postgres', () => Promise.resolve()),
        check('redis', () =>
          redisAnswers ? Promise.resolve() : Promise.reject(new Error('connect ECONNREFUSED')),
        ),
      ],
      registry,
    );
    const read = async () => (await registry.getSingleMetric('dependency_up')!.get()).values;
    expect(await read()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ labels: { dependency: 'postgres' }, value: 1 }),
        expect.objectContaining({ labels: { dependency: 'redis' }, value: 1 }),
      ]),
    );
    redisAnswers = false;
    expect(await read()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ labels: { dependency: 'redis' }, value: 0 }),
      ]),
    );
  });
});
