import { spawn } from 'node:child_process';
import { freePort, waitFor } from '@switchyard/testing';
import { Redis } from 'ioredis';

// A Redis server of the benchmark's own, so that its INFO commandstats and CPU count the
// benchmark's traffic and nothing else.

export async function privateRedis(): Promise<{ url: string; stop: () => void }> {
  const port = await freePort();
  const server = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG' ? true : undefined;
      } catch {
        return undefined;
      } finally {
        probe.disconnect();
      }
    },
    { timeoutMs: 10_000, what: 'redis-server listening' },
  );
  return { url, stop: () => server.kill() };
}

/** Calls per command since the last reset, inner calls of scripts included. */
export async function commandStats(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info('commandstats');
  return new Map(
    [...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map(([, name, calls]) => [
      name!,
      Number(calls),
    ]),
  );
}

/** Redis's own CPU seconds (its main thread and the rest, user and system). */
export async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  return [...info.matchAll(/^used_cpu_(?:sys|user):([\d.]+)/gm)].reduce(
    (sum, [, seconds]) => sum + Number(seconds),
    0,
  );
}
