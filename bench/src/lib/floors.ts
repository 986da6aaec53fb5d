import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, startApp, waitFor, type AppProcess } from '@switchyard/testing';
import { EDGE_NODE_FLAGS } from './deployed.js';

// The floors a gateway is read against (bare-proxy.ts), started as the gateway benchmark and
// the system-call count start them: pinned to the gateway's core, passing through to the
// mock upstream.

export const FLOORS = ['floor-pipe', 'floor-undici'] as const;
export type Floor = (typeof FLOORS)[number];

const BARE_PROXY = fileURLToPath(new URL('./bare-proxy.js', import.meta.url));

export interface RunningFloor {
  url: string;
  child: ChildProcess;
}

/** Starts one floor on `cpus`, in front of `upstreamUrl`; resolves once it answers. */
export async function startFloor(
  floor: Floor,
  upstreamUrl: string,
  cpus: string,
): Promise<RunningFloor> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn('taskset', ['-c', cpus, process.execPath, BARE_PROXY], {
    env: {
      ...process.env,
      UPSTREAM_URL: upstreamUrl,
      PORT: String(port),
      FLOOR_CLIENT: floor === 'floor-pipe' ? 'pipe' : 'undici',
    },
    stdio: 'ignore',
  });
  await waitFor(
    () =>
      fetch(url, { method: 'POST' }).then(
        () => true,
        () => undefined,
      ),
    { timeoutMs: 10_000, what: `${floor} listening` },
  );
  return { url, child };
}

const SHELL_FLOOR = fileURLToPath(new URL('./shell-floor.js', import.meta.url));

/**
 * The undici floor inside the suite's service shell (shell-floor.ts), started as the edge is
 * deployed (its V8 flags), with the edge's environment `env`, once it is ready.
 */
export function startShellFloor(
  env: Record<string, string>,
  upstreamUrl: string,
  cpus: string,
): Promise<AppProcess> {
  return startApp('edge', {
    entry: SHELL_FLOOR,
    env: { ...env, UPSTREAM_URL: upstreamUrl },
    cpus,
    readyPath: '/readyz',
    nodeFlags: [...EDGE_NODE_FLAGS],
  });
}
