import { startApp, type AppProcess } from '@switchyard/testing';

// The services as deployed (deploy/k8s, deploy/local): the V8 flags they start with there,
// which the benchmarks start them with too.

/** The edge's heap as deployed (docs/performance.md, "Edge memory"). */
export const EDGE_NODE_FLAGS: readonly string[] = [
  '--max-semi-space-size=16',
  '--heap-growing-percent=100',
];

/** The metering worker's young generation as deployed (docs/performance.md, "Metering"). */
export const METERING_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];

/** An edge started as deployed, pinned to `cpus`, once it is ready. */
export function startDeployedEdge(
  env: Record<string, string>,
  cpus: string,
  nodeFlags: readonly string[] = EDGE_NODE_FLAGS,
): Promise<AppProcess> {
  return startApp('edge', { env, cpus, readyPath: '/readyz', nodeFlags: [...nodeFlags] });
}

/** A metering worker started as deployed, pinned to `cpus`. */
export function startDeployedMetering(
  env: Record<string, string>,
  cpus: string,
  nodeFlags: readonly string[] = METERING_NODE_FLAGS,
): Promise<AppProcess> {
  return startApp('metering', { env, cpus, nodeFlags: [...nodeFlags] });
}
