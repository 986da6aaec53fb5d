import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { GatewayError, type RoutedChannel } from '@switchyard/contracts';
import { MessagingModule } from '@switchyard/messaging';
import { MetricsModule } from '@switchyard/observability';
import { SecretCipher, generateSecretKeySpec } from '@switchyard/security';
import { routedChannel, routedKey } from '@switchyard/routing/testing';
import { clearRedisNamespace, freePort, testRedisPrefix } from '@switchyard/testing';
import { chatCompletions } from '../front-apis/chat-completions/chat-completions.api.js';
import { RoutingModule } from '../routing/routing.module.js';
import { RoutingState } from '../routing/routing-state.js';
import { UpstreamModule } from '../upstream/upstream.module.js';
import { UsageModule } from '../usage/usage.module.js';
import { ChannelBreaker } from './channel-breaker.js';
import { ChannelForwarder } from './channel-forwarder.js';
import { ChannelPicker } from './channel-picker.js';
import { type ClientRequest, type RoutedExchange } from './exchange.js';
import { FAILOVER_OPTIONS, Failover, type FailoverOptions } from './failover.js';

// The fail-over step against real upstream HTTP servers and the real Redis: which failures
// spend the budget, what the budget bounds, and what a hanging channel costs.

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keySpec = generateSecretKeySpec('failover');
const cipher = new SecretCipher([keySpec]);

type Behaviour = 'ok' | 'banned' | 'limited' | 'broken' | 'hang' | 'silent-stream' | 'silent-json';

/** One upstream server; the first path segment of a channel's base URL says how it answers. */
class Upstreams {
  readonly requests = new Map<Behaviour, number>();
  private readonly hanging = new Set<ServerResponse>();
  private server!: Server;
  base = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const behaviour = (request.url ?? '').split('/')[1] as Behaviour;
      this.requests.set(behaviour, (this.requests.get(behaviour) ?? 0) + 1);
      request.resume();
      const json = (status: number, body: unknown) =>
        response
          .writeHead(status, { 'content-type': 'application/json' })
          .end(JSON.stringify(body));
      if (behaviour === 'hang') return void this.hanging.add(response);
      if (behaviour === 'silent-stream' || behaviour === 'silent-json') {
        // Headers at once, then not a byte: what a stuck relay does.
        const type = behaviour === 'silent-stream' ? 'text/event-stream' : 'application/json';
        response.writeHead(200, { 'content-type': type }).flushHeaders();
        return void this.hanging.add(response);
      }
      if (behaviour === 'banned') return json(401, { error: { message: 'invalid key' } });
      if (behaviour === 'limited') return json(429, { error: { message: 'slow down' } });
      if (behaviour === 'broken') return json(500, { error: { message: 'boom' } });
      json(200, {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: 'm',
        choices: [
          { index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  count(behaviour: Behaviour): number {
    return this.requests.get(behaviour) ?? 0;
  }

  async stop(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

let nextId = 1;
function channel(
  baseUrl: string,
  priority: number,
  extra: Partial<RoutedChannel> = {},
): RoutedChannel {
  const id = nextId++;
  return routedChannel(id, {
    baseUrl,
    models: ['m'],
    priority,
    keys: [routedKey(id * 100, { secretCiphertext: cipher.seal(`sk-${id}`) })],
    ...extra,
  });
}

function exchange(): RoutedExchange {
  return {
    request: { id: `req-${nextId++}`, ip: '127.0.0.1' } as ClientRequest,
    response: {} as ServerResponse,
    api: chatCompletions,
    token: {
      id: 1,
      keyHash: 'hash',
      status: 'enabled',
      expiresAt: null,
      exhausted: false,
      models: [],
      allowIps: null,
      group: 'default',
      rateLimit: null,
      hasQuota: false,
      requestLog: false,
      quota: null,
      teamId: null,
      ownerId: null,
      priceMultiplier: 1_000_000,
      balanceLimit: null,
      budgets: [],
    },
    requestedAt: Date.now(),
    startedAt: performance.now(),
    abort: new AbortController(),
    body: chatCompletions.parse(
      Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }] })),
    ),
    attempts: 0,
    candidate: null,
  };
}

describe('Failover (real upstream servers, real Redis)', () => {
  const prefix = testRedisPrefix();
  const upstreams = new Upstreams();
  let spool: string;
  let refused: string;
  let context: INestApplicationContext;
  let failover: Failover;
  let routing: RoutingState;
  let version = 0;

  async function boot(options: FailoverOptions): Promise<void> {
    await context?.close();
    @Module({
      imports: [
        MessagingModule.forRoot({ url: redisUrl, prefix }),
        MetricsModule.forService('edge'),
        RoutingModule.forRoot([keySpec]),
        UpstreamModule.forRoot({ firstByteMs: 10_000, idleMs: 10_000 }),
        UsageModule.forRoot(spool),
      ],
      providers: [
        { provide: FAILOVER_OPTIONS, useValue: options },
        ChannelPicker,
        ChannelForwarder,
        ChannelBreaker,
        Failover,
      ],
    })
    class FailoverTestModule {}
    context = await NestFactory.createApplicationContext(FailoverTestModule, { logger: false });
    failover = context.get(Failover);
    routing = context.get(RoutingState);
  }

  const route = (...channels: RoutedChannel[]) =>
    routing.install({ version: ++version, generatedAt: Date.now(), channels });

  beforeAll(async () => {
    await upstreams.start();
    spool = await mkdtemp(path.join(tmpdir(), 'failover-spec-'));
    refused = `http://127.0.0.1:${await freePort()}`;
  });

  afterAll(async () => {
    await context?.close();
    await upstreams.stop();
    await rm(spool, { recursive: true, force: true });
    await clearRedisNamespace(redisUrl, prefix);
  });

  it('goes past refusals and refused connections without spending the attempt budget', async () => {
    await boot({ maxAttempts: 1, timeBudgetMs: 60_000, firstByteMs: 10_000 });
    route(
      channel(`${upstreams.base}/banned`, 50),
      channel(`${upstreams.base}/limited`, 40),
      channel(refused, 30),
      channel(`${upstreams.base}/ok`, 10),
    );
    const request = exchange();
    const answered = await failover.run(request);
    expect(answered.response!.statusCode).toBe(200);
    expect(answered.attempt.candidate.channel.baseUrl).toBe(`${upstreams.base}/ok`);
    expect(request.attempts).toBe(4);
    await answered.response!.body.dump();
  });

  it('gives up after as many slow failures as the budget allows', async () => {
    await boot({ maxAttempts: 2, timeBudgetMs: 60_000, firstByteMs: 10_000 });
    const before = upstreams.count('ok');
    route(
      channel(`${upstreams.base}/broken`, 50),
      channel(`${upstreams.base}/broken`, 40),
      channel(`${upstreams.base}/ok`, 10),
    );
    const failure = await failover.run(exchange()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure).toMatchObject({ code: 'upstream_error' });
    expect((failure as Error).message).toMatch(/2 attempts; last: upstream answered 500: boom/);
    expect(upstreams.count('ok')).toBe(before);
  });

  it('waits for a hanging channel once, for its own first-byte time; later requests skip it', async () => {
    await boot({ maxAttempts: 3, timeBudgetMs: 60_000, firstByteMs: 10_000 });
    route(
      channel(`${upstreams.base}/hang`, 50, { firstByteTimeoutMs: 200 }),
      channel(`${upstreams.base}/ok`, 10),
    );
    const hangsBefore = upstreams.count('hang');
    for (let i = 0; i < 5; i += 1) {
      const request = exchange();
      const answered = await failover.run(request);
      expect(answered.response!.statusCode).toBe(200);
      expect(request.attempts).toBe(i === 0 ? 2 : 1);
      await answered.response!.body.dump();
    }
    expect(upstreams.count('hang') - hangsBefore).toBe(1);
  });

  it.each(['silent-stream', 'silent-json'] as const)(
    'fails over from a channel that sends its headers and then nothing (%s)',
    async (silent) => {
      await boot({ maxAttempts: 3, timeBudgetMs: 60_000, firstByteMs: 10_000 });
      route(
        channel(`${upstreams.base}/${silent}`, 50, { firstByteTimeoutMs: 300 }),
        channel(`${upstreams.base}/ok`, 10),
      );
      const started = performance.now();
      const request = exchange();
      const answered = await failover.run(request);
      expect(answered.response!.statusCode).toBe(200);
      expect(answered.attempt.candidate.channel.baseUrl).toBe(`${upstreams.base}/ok`);
      expect(request.attempts).toBe(2);
      expect(performance.now() - started).toBeLessThan(5_000);
      await answered.response!.body.dump();
      // Its breaker is open: the next request goes straight to the healthy channel.
      const next = exchange();
      await (await failover.run(next)).response!.body.dump();
      expect(next.attempts).toBe(1);
    },
  );

  it('cuts the wait to what is left of the time budget', async () => {
    await boot({ maxAttempts: 3, timeBudgetMs: 300, firstByteMs: 10_000 });
    const before = upstreams.count('ok');
    route(channel(`${upstreams.base}/hang`, 50), channel(`${upstreams.base}/ok`, 10));
    const failure = await failover.run(exchange()).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'upstream_timeout' });
    expect(upstreams.count('ok')).toBe(before);
  });

  it('says why when nothing could be tried', async () => {
    await boot({ maxAttempts: 3, timeBudgetMs: 60_000, firstByteMs: 10_000 });
    route(channel(`${upstreams.base}/ok`, 10, { models: ['other'] }));
    await expect(failover.run(exchange())).rejects.toMatchObject({
      code: 'model_not_found',
      status: 404,
      message: expect.stringMatching(/does not exist or is not served in group/),
    });
  });
});
