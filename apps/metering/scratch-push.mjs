import { Queue } from 'bullmq';
const N = Number(process.argv[2] ?? 30000);
const q = new Queue('usage', { connection: { url: 'redis://127.0.0.1:6379' }, prefix: 'mprof:bull' });
const t0 = Date.now();
for (let i = 0; i < N; i += 1000) {
  const now = Date.now();
  await q.addBulk(Array.from({ length: 1000 }, (_, j) => ({ name: 'usage', data: { requestId: `p-${t0}-${i + j}`, tokenId: 1 + ((i + j) % 50), channelId: null, keyId: null, endpoint: 'chat.completions', model: 'gpt-4o', upstreamModel: null, stream: false, status: 200, errorCode: null, usage: { promptTokens: 100, completionTokens: 50 }, latencyMs: 100, firstByteMs: 10, attempts: 1, clientIp: '1.2.3.4', requestedAt: now }, opts: { jobId: `p-${t0}-${i + j}`, removeOnComplete: true, attempts: 8, backoff: { type: 'exponential', delay: 1000 } } })));
}
console.log('pushed', N, Date.now() - t0, 'ms');
for (;;) { const c = await q.getJobCounts('waiting', 'active'); if (c.waiting + c.active === 0) break; await new Promise(r => setTimeout(r, 100)); }
console.log('drained', Date.now() - t0, 'ms');
await q.close();
