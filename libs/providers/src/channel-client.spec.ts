import { freePort, startApp, type AppProcess } from '@switchyard/testing';
import { errors as undiciErrors } from 'undici';
import { chatPing, chatRequestFor } from './channel-chat.js';
import { ChannelClient, ChannelUnreachable, readAtMost } from './channel-client.js';

// The channel client against the real mock-upstream process: where a call goes, what it
// carries, how it gives up, and how much of an answer it reads.

const KEY = 'sk-channel-client-0001';
const GEMINI_KEY = 'gemini-channel-client-0002';

interface Received {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

describe('ChannelClient (real mock-upstream)', () => {
  let upstream: AppProcess;
  let client: ChannelClient;

  const received = async (key: string): Promise<Received[]> => {
    const response = await fetch(`${upstream.url}/_mock/accounts/${key}/requests`);
    return (await response.json()) as Received[];
  };
  const chat = (content = 'ping') =>
    JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

  beforeAll(async () => {
    upstream = await startApp('mock-upstream', {
      env: { MOCK_ACCOUNTS: `${KEY},${GEMINI_KEY}`, LOG_LEVEL: 'warn' },
    });
    client = new ChannelClient({ firstByteMs: 5_000, idleMs: 5_000, userAgent: 'spec-agent' });
  });

  afterAll(async () => {
    await client?.close();
    await upstream?.stop();
  });

  it('puts an OpenAI route under the base with one /v1, and sends the key, request id and user agent', async () => {
    for (const baseUrl of [upstream.url, `${upstream.url}/v1`, `${upstream.url}/`]) {
      const response = await client.send({
        baseUrl,
        path: '/chat/completions',
        secret: KEY,
        body: chat(),
        requestId: 'req-spec-1',
      });
      expect(response.statusCode).toBe(200);
      await response.body.dump();
    }
    const requests = await received(KEY);
    expect(requests.map((r) => r.path)).toEqual(Array(3).fill('/v1/chat/completions'));
    expect(requests[0]!.headers).toMatchObject({
      'x-request-id': 'req-spec-1',
      'user-agent': 'spec-agent',
      'content-type': 'application/json',
      accept: 'application/json',
    });
  });

  it('sends a body of the type its caller names, as a multipart upload is', async () => {
    const form = new FormData();
    form.set('model', 'whisper-1');
    form.set('file', new Blob([Buffer.alloc(64)], { type: 'audio/wav' }), 'a.wav');
    const upload = new Request('http://x/', { method: 'POST', body: form });
    const type = upload.headers.get('content-type')!;
    const response = await client.send({
      baseUrl: upstream.url,
      path: '/audio/transcriptions',
      secret: KEY,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': type },
      body: Buffer.from(await upload.arrayBuffer()),
    });
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    expect((await received(KEY)).at(-1)!.headers['content-type']).toBe(type);
  });

  it('asks with GET and no body, as a model listing does', async () => {
    const response = await client.send({
      baseUrl: upstream.url,
      path: '/models',
      method: 'GET',
      secret: KEY,
    });
    expect(response.statusCode).toBe(200);
    const listed = JSON.parse((await readAtMost(response.body, 1 << 20)).toString('utf8')) as {
      data: unknown[];
    };
    expect(listed.data.length).toBeGreaterThan(0);
  });

  it('asks the signing hook for the URL the request goes to, and sends its headers', async () => {
    const signed: string[] = [];
    const response = await client.send({
      baseUrl: `${upstream.url}/`,
      path: '/v1/chat/completions',
      providerPath: true,
      secret: 'not-sent',
      headers: {},
      sign: (url) => {
        signed.push(url.href);
        return Promise.resolve({ authorization: `Bearer ${KEY}`, 'x-spec-signature': 'sig' });
      },
      body: chat('signed'),
    });
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    expect(signed).toEqual([`${upstream.url}/v1/chat/completions`]);
    const last = (await received(KEY)).at(-1)!;
    expect(last.headers['x-spec-signature']).toBe('sig');
    expect(last.body).toMatchObject({ messages: [{ role: 'user', content: 'signed' }] });
  });

  it('gives up on an upstream that sends no headers within the first-byte timeout', async () => {
    const failure = await client
      .send({
        baseUrl: upstream.url,
        path: '/chat/completions',
        secret: KEY,
        headers: { authorization: `Bearer ${KEY}`, 'x-mock-hang': '1' },
        body: chat(),
        firstByteMs: 200,
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ChannelUnreachable);
    expect(failure).toMatchObject({ kind: 'timeout', fast: false });
    expect((failure as ChannelUnreachable).cause).toBeInstanceOf(undiciErrors.HeadersTimeoutError);
  });

  it('fails reading a body that falls silent for longer than the idle timeout', async () => {
    const impatient = new ChannelClient({ firstByteMs: 5_000, idleMs: 200, userAgent: 'spec' });
    try {
      const response = await impatient.send({
        baseUrl: upstream.url,
        path: '/chat/completions',
        secret: KEY,
        headers: { authorization: `Bearer ${KEY}`, 'x-mock-chunk-delay-ms': '10000' },
        body: JSON.stringify({ ...(JSON.parse(chat()) as object), stream: true }),
        accept: 'text/event-stream',
      });
      expect(response.statusCode).toBe(200);
      await expect(response.body.text()).rejects.toBeInstanceOf(undiciErrors.BodyTimeoutError);
    } finally {
      await impatient.close();
    }
  });

  it('reports a refused connection as a fast connect error', async () => {
    const failure = await client
      .send({
        baseUrl: `http://127.0.0.1:${await freePort()}`,
        path: '/chat/completions',
        secret: KEY,
        body: chat(),
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ChannelUnreachable);
    expect(failure).toMatchObject({ kind: 'connect_error', fast: true });
    expect((failure as Error).message).toContain('ECONNREFUSED');
  });

  it("rejects with the signal's reason when the caller aborts, not as an unreachable upstream", async () => {
    const abort = new AbortController();
    const sent = client.send({
      baseUrl: upstream.url,
      path: '/chat/completions',
      secret: KEY,
      headers: { authorization: `Bearer ${KEY}`, 'x-mock-hang': '1' },
      body: chat(),
      signal: abort.signal,
    });
    const reason = new Error('the client left');
    abort.abort(reason);
    await expect(sent).rejects.toBe(reason);
  });

  it('reads at most the limit of a longer answer, and all of a shorter one', async () => {
    const reply = 'x'.repeat(8_000);
    const long = await client.send({
      baseUrl: upstream.url,
      path: '/chat/completions',
      secret: KEY,
      headers: { authorization: `Bearer ${KEY}`, 'x-mock-reply': reply },
      body: chat(),
    });
    const head = await readAtMost(long.body, 100);
    expect(head.length).toBe(100);
    expect(head.toString('utf8')).toMatch(/^\{/);

    const short = await client.send({
      baseUrl: upstream.url,
      path: '/chat/completions',
      secret: KEY,
      body: chat(),
    });
    const whole = await readAtMost(short.body, 1 << 20);
    expect(JSON.parse(whole.toString('utf8'))).toMatchObject({ object: 'chat.completion' });
  });

  describe('chatRequestFor / chatPing', () => {
    it('sends an openai channel the body as given, with the upstream model, and reads the answer as is', async () => {
      const ping = chatPing(
        {
          provider: 'openai',
          baseUrl: upstream.url,
          secret: KEY,
          settings: {},
          upstreamModel: 'gpt-4o-mini',
        },
        'gpt-4o',
        1,
      );
      const response = await client.send(ping.call);
      const answer = await readAtMost(response.body, 1 << 20);
      expect(JSON.parse(ping.toOpenAI(response.statusCode, answer).toString('utf8'))).toMatchObject(
        {
          model: 'gpt-4o-mini',
          choices: [{ message: { content: 'Echo: ping' } }],
        },
      );
      expect(ping.healthStatus(response.statusCode, answer)).toBe(200);
      expect((await received(KEY)).at(-1)).toMatchObject({
        path: '/v1/chat/completions',
        body: {
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'ping' }],
          max_tokens: 1,
        },
      });
    });

    it("speaks a converted provider's format on its own route, and reads its answer back in OpenAI's", async () => {
      const request = chatRequestFor(
        {
          provider: 'gemini',
          baseUrl: upstream.url,
          secret: GEMINI_KEY,
          settings: {},
          upstreamModel: 'gemini-2.0-flash',
        },
        { model: 'gemini', messages: [{ role: 'user', content: 'hello' }] },
        false,
      );
      expect(request.call).toMatchObject({ providerPath: true });
      const response = await client.send(request.call);
      expect(response.statusCode).toBe(200);
      const answer = await readAtMost(response.body, 1 << 20);
      const openai = JSON.parse(request.toOpenAI(response.statusCode, answer).toString('utf8')) as {
        object: string;
        choices: { message: { content: string } }[];
      };
      expect(openai.object).toBe('chat.completion');
      expect(openai.choices[0]!.message.content).toContain('hello');
      expect((await received(GEMINI_KEY)).at(-1)!.path).toMatch(
        /^\/v1beta\/models\/gemini-2\.0-flash:generateContent/,
      );
    });
  });
});
