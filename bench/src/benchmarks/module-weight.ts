import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { repositoryRoot } from '@switchyard/testing';
import { EDGE_NODE_FLAGS } from '../lib/deployed.js';

// What the edge's memory at rest is made of (docs/performance.md, "What the edge's memory
// is made of"): the modules it loads, in layers, each layer added to the ones before in a
// fresh Node process started as the edge is deployed, with the heap a full collection
// leaves and the resident memory after each layer. The first layer past Node is the floor's
// own library (undici); the last is the edge's whole module graph, whose modules import
// every layer before them.
//
//   node bench/dist/benchmarks/module-weight.js

interface Layer {
  name: string;
  /** Imported from the edge's directory, so each resolves to the edge's own copy. */
  modules: string[];
}

const LAYERS: Layer[] = [
  { name: 'Node alone', modules: [] },
  { name: 'undici (the floor has it too)', modules: ['undici'] },
  { name: 'ioredis', modules: ['ioredis'] },
  { name: 'BullMQ', modules: ['bullmq'] },
  { name: 'class-validator, class-transformer', modules: ['class-validator', 'class-transformer'] },
  { name: 'NestJS core and common', modules: ['@nestjs/common', '@nestjs/core'] },
  { name: 'Fastify and its Nest adapter', modules: ['fastify', '@nestjs/platform-fastify'] },
  { name: 'Nest microservices, rxjs', modules: ['@nestjs/microservices', 'rxjs'] },
  {
    name: 'the libraries of this repository',
    modules: [
      '@switchyard/config',
      '@switchyard/contracts',
      '@switchyard/db/sql',
      '@switchyard/limiter',
      '@switchyard/messaging',
      '@switchyard/observability',
      '@switchyard/providers',
      '@switchyard/routing',
      '@switchyard/service',
      '@switchyard/spend',
    ],
  },
  { name: 'the edge', modules: ['./dist/edge.definition.js'] },
];

interface Weight {
  heapMiB: number;
  residentMiB: number;
}

/** The heap and resident memory of a fresh process once `modules` are loaded. */
function weigh(modules: string[]): Weight {
  const script = `
    for (const name of ${JSON.stringify(modules)}) await import(name);
    globalThis.gc(); globalThis.gc();
    const { heapUsed, rss } = process.memoryUsage();
    process.stdout.write(JSON.stringify({ heapMiB: heapUsed / 2 ** 20, residentMiB: rss / 2 ** 20 }));
  `;
  const output = execFileSync(
    process.execPath,
    [...EDGE_NODE_FLAGS, '--expose-gc', '--input-type=module', '--eval', script],
    { cwd: path.join(repositoryRoot, 'apps/edge'), encoding: 'utf8' },
  );
  return JSON.parse(output) as Weight;
}

function main(): void {
  const header = ['layer'.padEnd(36), 'heap MiB', '  added', 'resident MiB', '  added'];
  const lines = [header.join(' ')];
  const loaded: string[] = [];
  let before: Weight | null = null;
  for (const layer of LAYERS) {
    loaded.push(...layer.modules);
    const weight = weigh(loaded);
    const added = (now: number, then: number | undefined) =>
      (then === undefined ? '' : `+${(now - then).toFixed(1)}`).padStart(7);
    lines.push(
      [
        layer.name.padEnd(36),
        weight.heapMiB.toFixed(1).padStart(8),
        added(weight.heapMiB, before?.heapMiB),
        weight.residentMiB.toFixed(1).padStart(12),
        added(weight.residentMiB, before?.residentMiB),
      ].join(' '),
    );
    before = weight;
  }
  process.stdout.write(
    `the edge's modules in layers, each added to those above it (heap: used after a full collection)\n${lines.join('\n')}\n`,
  );
}

main();
