import { type ServerResponse } from 'node:http';
import { chatCompletions } from '../front-apis/chat-completions/chat-completions.api.js';
import { type ClientRequest, type Exchange } from './exchange.js';
import { usageRecordOf } from './usage-meter.js';

// What one request becomes for metering: the record the edge queues.

function exchange(body: Exchange['body']): Exchange {
  return {
    request: { id: 'req-1', ip: '10.0.0.7' } as ClientRequest,
    response: {} as ServerResponse,
    api: chatCompletions,
    token: {
      id: 42,
      keyHash: 'hash',
      status: 'enabled',
      expiresAt: null,
      exhausted: false,
      models: [],
      allowIps: null,
      group: 'default',
      rateLimit: null,
      hasQuota: true,
      requestLog: false,
      quota: 1_000,
      teamId: null,
      ownerId: null,
      priceMultiplier: 1_000_000,
      balanceLimit: null,
      budgets: [],
    },
    requestedAt: 1_700_000_000_000,
    startedAt: performance.now(),
    abort: new AbortController(),
    body,
    attempts: 2,
    candidate: null,
  };
}

const chat = chatCompletions.parse(
  Buffer.from(
    JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'count me' }] }),
  ),
);

describe('usageRecordOf', () => {
  it('carries reported usage as is, and no texts to count', () => {
    const record = usageRecordOf(exchange(chat), {
      status: 200,
      errorCode: null,
      usage: { promptTokens: 3, completionTokens: 5 },
      upstreamModel: 'gpt-4o-2024',
      completionText: 'ignored',
      firstByteMs: 12,
    });
    expect(record).toMatchObject({
      requestId: 'req-1',
      tokenId: 42,
      channelId: null,
      model: 'gpt-4o',
      upstreamModel: 'gpt-4o-2024',
      status: 200,
      usage: { promptTokens: 3, completionTokens: 5 },
      attempts: 2,
      clientIp: '10.0.0.7',
      requestedAt: 1_700_000_000_000,
    });
    expect(record.promptText).toBeUndefined();
    expect(record.completionText).toBeUndefined();
  });

  it('hands metering the texts to count when a delivered answer reported no usage', () => {
    const record = usageRecordOf(exchange(chat), {
      status: 200,
      errorCode: null,
      usage: null,
      upstreamModel: null,
      completionText: 'an answer',
      firstByteMs: 12,
    });
    expect(record.promptText).toContain('count me');
    expect(record.completionText).toBe('an answer');
  });

  it('records a refusal before any upstream: no texts, no channel', () => {
    const record = usageRecordOf(exchange(null), {
      status: 429,
      errorCode: 'rate_limit_exceeded',
      usage: null,
      upstreamModel: null,
      completionText: '',
      firstByteMs: null,
    });
    expect(record).toMatchObject({ model: '', status: 429, errorCode: 'rate_limit_exceeded' });
    expect(record.promptText).toBeUndefined();
  });
});
