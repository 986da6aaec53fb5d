import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

// freePort across processes (processes.ts): test processes run side by side (Jest's
// workers, the packages' runs at once), each handing out ports that its servers bind only
// later, so a port must not be handed out twice between them.

const run = promisify(execFile);
const PROCESSES = 4;
const PORTS_EACH = 200;

/** The ports one process draws, from the built module, as a test process imports it. */
async function drawInAProcess(): Promise<number[]> {
  const module = new URL('../dist/processes.js', import.meta.url).href;
  const { stdout } = await run(process.execPath, [
    '--input-type=module',
    '-e',
    `const { freePort } = await import(${JSON.stringify(module)});
     const ports = [];
     for (let i = 0; i < ${PORTS_EACH}; i += 1) ports.push(await freePort());
     console.log(JSON.stringify(ports));`,
  ]);
  return JSON.parse(stdout) as number[];
}

describe('freePort', () => {
  it('never hands one port to two processes drawing at once', async () => {
    // Drawn at random from 16,384 ports, 800 would repeat about 15 times across processes.
    const drawn = (await Promise.all(Array.from({ length: PROCESSES }, drawInAProcess))).flat();
    expect(drawn).toHaveLength(PROCESSES * PORTS_EACH);
    expect(drawn.length - new Set(drawn).size).toBe(0);
  });
});
