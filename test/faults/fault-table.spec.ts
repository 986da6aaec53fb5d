import { readdir } from 'node:fs/promises';
import { Redis } from 'ioredis';
import { waitFor, PrivatePostgres, query } from '@switchyard/testing';
import {
  byStatus,
  chat,
  expectBalanced,
  openAIError,
  sendLoad,
  usageRows,
  type Answered,
} from '../support/load.js';
import { PrivateRedis } from '../support/private-redis.js';
import { freshAccount, Stack, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// The fault table of docs/reliability.md: a short load through the whole suite while one
// part of it fails, then the books: every request answered without a 5xx (unless the row
// says one is allowed), one usage row per request, and tokens charged exactly the sum of
// their rows. Postgres and Redis are the test's own, so they can be restarted.

const REQUESTS = 240;
const CONCURRENCY = 6;
/** The load's pace: each answer takes this long upstream, so the load outlasts the faults. */
const UPSTREAM_LATENCY_MS = 40;
const OUTAGE_MS = 1_500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Figures for docs/reliability.md, printed once the table has run. */
const observed: string[] = [];

describe('faults: the books balance after each fault', () => {
  const postgres = new PrivatePostgres();
  const redis = new PrivateRedis({ persistent: true });
  let stack: Stack;

  beforeAll(async () => {
    await postgres.start();
    await redis.start();
    stack = new Stack({
      postgresUrl: postgres.url,
      redisUrl: redis.url,
      metering: 2,
      edgeEnv: { UPSTREAM_FIRST_BYTE_TIMEOUT_MS: '1000' },
    });
    await stack.start();
  }, STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    if (observed.length > 0) process.stdout.write(`\nfault table:\n${observed.join('\n')}\n`);
    await stack?.stop();
    await redis.remove();
    await postgres.remove();
  });

  /** A token and a model of their own for one row of the table, warmed up (the token cached). */
  async function fixture(limits?: { rpm?: number; concurrency?: number }) {
    const token = await stack.createToken();
    const model = uniqueName('m');
    const account = await freshAccount(stack);
    await stack.createChannel({ models: [model], keys: [account], limits });
    await stack.mockFault({ key: account, latencyMs: UPSTREAM_LATENCY_MS });
    const warmUp = await chat(stack.edge.url, token.key, {
      model,
      messages: [{ role: 'user', content: 'warm up' }],
    });
    expect(warmUp.status).toBe(200);
    return { token, model, account, warmUp };
  }

  function record(
    fault: string,
    answers: Answered[],
    duringFault: number,
    rows: number,
    recoveredMs: number,
  ): void {
    observed.push(
      `${fault}: ${answers.length} requests (${duringFault} answered during the fault), statuses ${JSON.stringify(byStatus(answers))}, ${rows} usage rows, the last ${recoveredMs} ms after the fault ended`,
    );
  }

  it('Postgres restarts mid-load: the edge serves cached tokens, metering holds its batches and catches up', async () => {
    const { token, model, warmUp } = await fixture();
    const unseen = await stack.createToken();
    let faultEnded = 0;
    let duringFault = 0;
    let duringOutage: Answered | undefined;
    const answers = await sendLoad({
      baseUrl: stack.edge.url,
      token: token.key,
      model,
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      mixStreams: true,
      midway: {
        after: REQUESTS / 4,
        run: async (answered) => {
          await postgres.stop();
          const before = answered();
          // A token no edge has cached cannot be checked now: a clean 503, never a 500.
          duringOutage = await chat(stack.edge.url, unseen.key, {
            model,
            messages: [{ role: 'user', content: 'x' }],
          });
          await sleep(OUTAGE_MS);
          duringFault = answered() - before;
          await postgres.start();
          faultEnded = performance.now();
        },
      },
    });
    expect(byStatus(answers)).toEqual({ 200: answers.length });
    expect(duringFault).toBeGreaterThan(0);
    expect(duringOutage?.status).toBe(503);
    expect(openAIError(duringOutage!).code).toBe('service_unavailable');

    const books = await usageRows(stack.databaseUrl, token.id, answers.length + 1);
    await expectBalanced(stack.databaseUrl, token.id, [warmUp, ...answers], books);
    record(
      'Postgres restart',
      answers,
      duringFault,
      books.rows.length,
      Math.round(performance.now() - faultEnded),
    );
  });

  it('Redis restarts mid-load: limits fail open, usage is spooled and replayed, events resume', async () => {
    // Limits make every pick ask Redis: with Redis away they must fail open.
    const { token, model, warmUp } = await fixture({ rpm: 100_000, concurrency: 100 });
    let faultEnded = 0;
    let duringFault = 0;
    let spooled = 0;
    let readyDuringOutage = 0;
    const answers = await sendLoad({
      baseUrl: stack.edge.url,
      token: token.key,
      model,
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      mixStreams: true,
      midway: {
        after: REQUESTS / 4,
        run: async (answered) => {
          // SIGTERM: Redis writes its append-only file out, as in a rolling restart.
          await redis.stop('SIGTERM');
          const before = answered();
          spooled = await waitFor(async () => (await readdir(stack.spoolDir)).length || undefined, {
            what: 'usage spooled to disk',
          });
          readyDuringOutage = (await fetch(`${stack.edge.url}/readyz`)).status;
          await sleep(OUTAGE_MS);
          duringFault = answered() - before;
          await redis.start();
          faultEnded = performance.now();
        },
      },
    });
    expect(byStatus(answers)).toEqual({ 200: answers.length });
    expect(duringFault).toBeGreaterThan(0);
    expect(spooled).toBeGreaterThan(0);
    // Not ready without Redis (a balancer sends new traffic elsewhere), yet serving.
    expect(readyDuringOutage).toBe(503);

    const books = await usageRows(stack.databaseUrl, token.id, answers.length + 1);
    await expectBalanced(stack.databaseUrl, token.id, [warmUp, ...answers], books);
    await waitFor(async () => ((await readdir(stack.spoolDir)).length === 0 ? true : undefined), {
      what: 'spool replayed',
    });
    record(
      'Redis restart',
      answers,
      duringFault,
      books.rows.length,
      Math.round(performance.now() - faultEnded),
    );
    await waitFor(
      async () => ((await fetch(`${stack.edge.url}/readyz`)).status === 200 ? true : undefined),
      { what: 'the edge ready again' },
    );

    // Events flow again: a new channel reaches the edge through the router's snapshot.
    const later = uniqueName('m');
    await stack.createChannel({ models: [later], keys: [await freshAccount(stack)] });
    const answer = await chat(stack.edge.url, token.key, {
      model: later,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(answer.status).toBe(200);
  });

  it("the bus's subscribers are cut: a token changed while they were away is read again", async () => {
    const { token, model } = await fixture();
    const ask = () =>
      chat(stack.edge.url, token.key, { model, messages: [{ role: 'user', content: 'x' }] });
    // Disabled behind the edge's back, as if its `token.changed` were lost: the edge keeps
    // its cached copy, whose expiry is minutes away.
    await query(stack.databaseUrl, `UPDATE "Token" SET status = 'disabled' WHERE id = $1`, [
      token.id,
    ]);
    expect((await ask()).status).toBe(200);

    // Only the subscribers: the edge's keyed client stays connected, so what reads the
    // tokens again is the subscriber's reconnection.
    const admin = new Redis(redis.url);
    try {
      expect(Number(await admin.client('KILL', 'TYPE', 'PUBSUB'))).toBeGreaterThan(0);
    } finally {
      admin.disconnect();
    }
    const refused = await waitFor(
      async () => {
        const answer = await ask();
        return answer.status === 200 ? undefined : answer;
      },
      { what: 'the disabled token refused' },
    );
    expect(refused.status).toBe(401);
  });

  it('one of two metering workers is SIGKILLed mid-batch: the other bills every request exactly once', async () => {
    const { token, model, warmUp } = await fixture();
    const victim = stack.meterings[0]!;
    let faultEnded = 0;
    let answeredAtKill = 0;
    const answers = await sendLoad({
      baseUrl: stack.edge.url,
      token: token.key,
      model,
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      mixStreams: true,
      midway: {
        after: REQUESTS / 3,
        run: async (answered) => {
          await victim.stop('SIGKILL');
          answeredAtKill = answered();
          faultEnded = performance.now();
        },
      },
    });
    expect(byStatus(answers)).toEqual({ 200: answers.length });
    const books = await usageRows(stack.databaseUrl, token.id, answers.length + 1);
    await expectBalanced(stack.databaseUrl, token.id, [warmUp, ...answers], books);
    record(
      'metering worker SIGKILL',
      answers,
      answers.length - answeredAtKill,
      books.rows.length,
      Math.round(performance.now() - faultEnded),
    );
    stack.meterings.splice(stack.meterings.indexOf(victim), 1);
    await stack.startMetering();
  });

  describe('the upstream misbehaves', () => {
    let token: { id: number; key: string };
    const answers: Answered[] = [];
    const HTML = '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>';
    const COMPLETION = JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    });
    const CHUNK = (content: string) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

    beforeAll(async () => {
      token = await stack.createToken();
    });

    /** A model served by a channel with the given fault, and a healthy one below it when asked. */
    async function misbehaving(fault: Record<string, unknown>, fallback: boolean) {
      const model = uniqueName('m');
      const broken = await freshAccount(stack);
      await stack.createChannel({ models: [model], keys: [broken], priority: 10 });
      if (fallback)
        await stack.createChannel({ models: [model], keys: [await freshAccount(stack)] });
      await stack.mockFault({ key: broken, ...fault });
      return model;
    }

    async function ask(model: string, stream = false): Promise<Answered> {
      const answer = await chat(stack.edge.url, token.key, {
        model,
        stream,
        messages: [{ role: 'user', content: 'garbage in' }],
      });
      answers.push(answer);
      return answer;
    }

    const GARBAGE: [string, Record<string, unknown>, number, string][] = [
      [
        'JSON cut short (200)',
        { body: '{"id":"chatcmpl-1","choices":[{"ind' },
        502,
        'upstream_error',
      ],
      ['an empty body (200)', { body: '' }, 502, 'upstream_error'],
      ['an HTML page (200)', { body: HTML, contentType: 'text/html' }, 502, 'upstream_error'],
      [
        'an HTML error page (502)',
        { status: 502, body: HTML, contentType: 'text/html' },
        502,
        'upstream_error',
      ],
      ['a cut connection', { disconnectAfterChunks: 0 }, 502, 'upstream_error'],
      ['a hang', { hang: true }, 504, 'upstream_timeout'],
    ];

    it.each(GARBAGE)(
      '%s: a clean OpenAI error alone, the healthy channel’s answer with one below',
      async (_name, fault, status, code) => {
        const alone = await ask(await misbehaving(fault, false));
        expect(alone.status).toBe(status);
        expect(openAIError(alone).code).toBe(code);

        const failedOver = await ask(await misbehaving(fault, true));
        expect(failedOver.status).toBe(200);
        expect(failedOver.contentType).toMatch(/^application\/json/);
        expect(JSON.parse(failedOver.body)).toMatchObject({
          choices: [{ message: { content: 'Echo: garbage in' } }],
        });
      },
    );

    it('a completion sent with the wrong content type reaches the client as JSON', async () => {
      const answer = await ask(
        await misbehaving({ body: COMPLETION, contentType: 'text/plain' }, false),
      );
      expect(answer.status).toBe(200);
      expect(answer.contentType).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toMatchObject({ choices: [{ message: { content: 'hi' } }] });
    });

    it.each([
      ['cut mid-event', `${CHUNK('Hel')}data: {"id":"c","object":"chat.compl`],
      ['ended without [DONE]', `${CHUNK('Hel')}${CHUNK('lo')}`],
      ['cut by the connection', null],
    ])('a stream %s ends with the interruption event the SDKs raise', async (_name, body) => {
      const fault =
        body === null ? { disconnectAfterChunks: 2 } : { body, contentType: 'text/event-stream' };
      const answer = await ask(await misbehaving(fault, true), true);
      expect(answer.status).toBe(200);
      const events = answer.body
        .split('\n\n')
        .filter((event) => event.startsWith('data: '))
        .map((event) => event.slice(6));
      expect(events.at(-1)).not.toBe('[DONE]');
      // Whole events only: the SDKs parse each one, and half an event fails that.
      for (const data of events) expect(() => JSON.parse(data) as unknown).not.toThrow();
      expect(JSON.parse(events.at(-1)!)).toMatchObject({
        error: { code: 'stream_interrupted', type: 'upstream_error' },
      });
    });

    it('a stream of events in another shape than chunks is relayed as sent, and metered', async () => {
      const body = `data: null\n\ndata: {"choices":5}\n\n${CHUNK('ok')}data: [DONE]\n\n`;
      const answer = await ask(
        await misbehaving({ body, contentType: 'text/event-stream' }, false),
        true,
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toBe(body);
    });

    it('every answer above is metered once, as docs/reliability.md says', async () => {
      const books = await usageRows(stack.databaseUrl, token.id, answers.length);
      await expectBalanced(stack.databaseUrl, token.id, answers, books);
      const row = new Map(books.rows.map((r) => [r.requestId, r]));
      for (const answer of answers) {
        const metered = row.get(answer.id)!;
        expect(metered.status).toBe(answer.status);
        if (answer.status >= 500) {
          expect(metered.errorCode).toBe(openAIError(answer).code);
          expect(metered.cost).toBe('0');
        }
        if (answer.body.includes('stream_interrupted'))
          expect(metered.errorCode).toBe('stream_interrupted');
      }
      const rows = await query<{ n: string }>(
        stack.databaseUrl,
        'SELECT count(*) AS n FROM "UsageLog" WHERE "tokenId" = $1 AND attempts = 2 AND status = 200',
        [token.id],
      );
      expect(Number(rows[0]!.n)).toBe(GARBAGE.length);
      observed.push(
        `upstream garbage: ${answers.length} requests, statuses ${JSON.stringify(byStatus(answers))}, ${books.rows.length} usage rows`,
      );
    });
  });
});
