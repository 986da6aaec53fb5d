import type { StartedWebStack } from './web-stack.setup.js';

export default async function teardown(): Promise<void> {
  await (globalThis as { webStack?: StartedWebStack }).webStack?.stop();
}
