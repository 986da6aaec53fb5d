import { benchGateway, ROW_HEADER } from './gateway.js';

// `pnpm bench`: every benchmark, one after the other, printed for docs/performance.md.

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

log('== gateway: direct to the upstream vs through the edge ==');
log(ROW_HEADER);
const gateway = await benchGateway(log);
log(`edge peak resident memory: ${gateway.edgePeakMemoryMiB.toFixed(0)} MiB`);

const pair = (kind: 'json' | 'stream', connections: number) => {
  const direct = gateway.rows.find((r) => r.target === 'direct' && r.kind === kind && r.connections === connections)!;
  const edge = gateway.rows.find((r) => r.target === 'edge' && r.kind === kind && r.connections === connections)!;
  return { direct, edge };
};
const single = pair('json', 1);
const stream = pair('stream', 1);
log('');
log(`overhead, JSON, 1 connection: p50 +${(single.edge.p50Ms - single.direct.p50Ms).toFixed(3)} ms`);
log(`overhead, stream, 1 connection: time to first token p50 +${(stream.edge.ttftP50Ms! - stream.direct.ttftP50Ms!).toFixed(3)} ms`);
log(`edge CPU per JSON request at 64 connections: ${pair('json', 64).edge.edgeCpuMicrosPerRequest!.toFixed(0)} us`);
