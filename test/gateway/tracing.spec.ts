import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { startApp, waitFor, type AppProcess } from '@switchyard/testing';
import { freshAccount, Stack, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// OpenTelemetry across the hops (docs/operations.md, "Traces"): a client's traceparent is
// the parent of the edge's span, each upstream attempt is a client span the mock upstream's
// server span hangs from, the router's handling of the attempts' outcomes (a bus event)
// joins the trace, and metering's settlement of the usage batch links to the request. The
// apps export OTLP/JSON to a receiver in this process; no exported attribute holds a secret.

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  events?: { name: string; attributes?: OtlpAttribute[] }[];
  links?: { traceId: string; spanId: string; attributes?: OtlpAttribute[] }[];
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

interface ReceivedSpan extends OtlpSpan {
  service: string;
  attrs: Record<string, string | number | boolean | undefined>;
}

/** Ids arrive as hex in OTLP/JSON; base64 is what protobuf-JSON mappings use. */
function hexId(id: string | undefined): string | undefined {
  if (!id) return undefined;
  return /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

function valueOf(value: OtlpValue): string | number | boolean | undefined {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.boolValue ?? value.doubleValue;
}

function attributesOf(list: OtlpAttribute[] | undefined): ReceivedSpan['attrs'] {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            this.spans.push({
              ...span,
              traceId: hexId(span.traceId)!,
              spanId: hexId(span.spanId)!,
              parentSpanId: hexId(span.parentSpanId),
              links: span.links?.map((link) => ({
                ...link,
                traceId: hexId(link.traceId)!,
                spanId: hexId(link.spanId)!,
              })),
              service,
              attrs: attributesOf(span.attributes),
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  inTrace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }
}

const SPAN_KIND = { server: 2, client: 3, producer: 4, consumer: 5 } as const;

describe('gateway: traces across every hop', () => {
  const receiver = new OtlpReceiver();
  let stack: Stack;
  let token: { key: string };
  let chat: AppProcess;
  const chatAdmin = { username: 'chatowner', password: `pw-${randomBytes(6).toString('hex')}` };
  let otelEnv: Record<string, string>;

  beforeAll(async () => {
    const endpoint = await receiver.start();
    otelEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' };
    stack = new Stack({ metering: true, env: otelEnv });
    await stack.start();
    token = await stack.createToken();
    chat = await startApp('chat', {
      env: {
        ...stack.env,
        CHAT_ADMIN_USERNAME: chatAdmin.username,
        CHAT_ADMIN_PASSWORD: chatAdmin.password,
      },
      readyPath: '/readyz',
    });
  }, STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await chat?.stop();
    await stack?.stop();
    await receiver.stop();
  });

  it('makes one trace of a streamed request that failed over, with no secret in it', async () => {
    const model = uniqueName('m');
    const [first, second] = [await freshAccount(stack), await freshAccount(stack)];
    await stack.createChannel({ models: [model], keys: [first], priority: 10 });
    const fallback = await stack.createChannel({ models: [model], keys: [second], priority: 0 });
    await stack.routable(token.key, model);
    await stack.mockFault({ key: first, times: 1, status: 500 });

    const traceId = randomBytes(16).toString('hex');
    const clientSpanId = randomBytes(8).toString('hex');
    const response = await fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token.key}`,
        'content-type': 'application/json',
        traceparent: `00-${traceId}-${clientSpanId}-01`,
      },
      body: JSON.stringify({
        model,
        stream: true,
        messages: [{ role: 'user', content: 'trace me' }],
      }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('[DONE]');
    expect(response.headers.get('x-switchyard-trace-id')).toBe(traceId);

    // The request's span, its attempts, and the mock upstream's span of each attempt.
    const edgeSpan = await waitFor(
      () =>
        receiver
          .inTrace(traceId)
          .find((span) => span.service === 'edge' && span.kind === SPAN_KIND.server),
      { what: "the edge's request span" },
    );
    expect(edgeSpan.parentSpanId).toBe(clientSpanId);
    expect(edgeSpan.events?.map((event) => attributesOf(event.attributes))).toEqual([
      expect.objectContaining({
        'switchyard.outcome': 'server_error',
        'http.response.status_code': 500,
      }),
      expect.objectContaining({ 'switchyard.outcome': 'ok' }),
    ]);
    // What the gateway decided, on a span of its own under the request's.
    const gatewaySpan = await waitFor(
      () =>
        receiver
          .inTrace(traceId)
          .find((span) => span.service === 'edge' && span.name === 'gateway chat.completions'),
      { what: "the edge's gateway span" },
    );
    expect(gatewaySpan.parentSpanId).toBe(edgeSpan.spanId);
    expect(gatewaySpan.attrs).toMatchObject({
      'gen_ai.request.model': model,
      'switchyard.channel.id': fallback.id,
      'switchyard.key.id': fallback.keyIds[0],
      'switchyard.attempts': 2,
      'switchyard.failovers': 1,
      'switchyard.stream': true,
      'http.response.status_code': 200,
    });
    expect(gatewaySpan.attrs['switchyard.token.id']).toEqual(expect.any(Number));
    expect(gatewaySpan.attrs['switchyard.first_byte_ms']).toEqual(expect.any(Number));

    const attempts = await waitFor(
      () => {
        const found = receiver
          .inTrace(traceId)
          .filter(
            (span) =>
              span.service === 'edge' &&
              span.kind === SPAN_KIND.client &&
              span.attrs['url.full'] !== undefined,
          );
        return found.length === 2 ? found : undefined;
      },
      { what: "the edge's two upstream attempts" },
    );
    for (const attempt of attempts) expect(attempt.parentSpanId).toBe(edgeSpan.spanId);
    const upstreamSpans = await waitFor(
      () => {
        const found = receiver
          .inTrace(traceId)
          .filter((span) => span.service === 'mock-upstream' && span.kind === SPAN_KIND.server);
        return found.length === 2 ? found : undefined;
      },
      { what: "the mock upstream's two request spans" },
    );
    expect(upstreamSpans.map((span) => span.parentSpanId).sort()).toEqual(
      attempts.map((span) => span.spanId).sort(),
    );

    // Across the bus: the outcomes event the edge publishes, handled by the router.
    const publish = await waitFor(
      () =>
        receiver
          .inTrace(traceId)
          .find((span) => span.service === 'edge' && span.kind === SPAN_KIND.producer),
      { what: "the edge's outcome publish span" },
    );
    expect(publish.parentSpanId).toBe(edgeSpan.spanId);
    const routerSpan = await waitFor(
      () =>
        receiver
          .inTrace(traceId)
          .find((span) => span.service === 'router' && span.kind === SPAN_KIND.consumer),
      { what: "the router's span of the outcomes event" },
    );
    expect(routerSpan.parentSpanId).toBe(publish.spanId);

    // Across the queue: metering's settlement links to the request it billed.
    const settlement = await waitFor(
      () =>
        receiver.spans.find(
          (span) =>
            span.service === 'metering' &&
            span.name === 'usage settle' &&
            span.links?.some((link) => link.spanId === gatewaySpan.spanId),
        ),
      { what: "metering's settlement span linked to the request" },
    );
    expect(settlement.links?.find((link) => link.spanId === gatewaySpan.spanId)?.traceId).toBe(
      traceId,
    );

    // No exported attribute, event or link attribute anywhere holds a key or the token.
    const secrets = [token.key, first, second, stack.secretKeys];
    const texts = receiver.spans.flatMap((span) => [
      ...Object.values(span.attrs),
      ...(span.events ?? []).flatMap((event) => Object.values(attributesOf(event.attributes))),
      ...(span.links ?? []).flatMap((link) => Object.values(attributesOf(link.attributes))),
    ]);
    expect(texts.length).toBeGreaterThan(0);
    for (const text of texts.filter((value) => typeof value === 'string')) {
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
    // And no prompt.
    expect(texts.filter((value) => String(value).includes('trace me'))).toEqual([]);
  });

  it("continues a chat user's trace through the chat app into the gateway", async () => {
    const model = uniqueName('m');
    await stack.createChannel({ models: [model], keys: [await freshAccount(stack)] });
    await stack.routable(token.key, model);
    const chatApi = async (route: string, bearer: string | null, body: unknown) => {
      const response = await fetch(`${chat.url}${route}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        },
        body: JSON.stringify(body),
      });
      expect(response.ok).toBe(true);
      return response;
    };
    const { token: bearer } = (await (
      await chatApi('/api/auth/login', null, chatAdmin)
    ).json()) as { token: string };
    await chatApi('/api/admin/api-keys', bearer, {
      address: stack.edge.url,
      key: token.key,
      purpose: 'chat',
    });
    await chatApi('/api/admin/models', bearer, { name: model, open: true });
    const conversation = (await (
      await chatApi('/api/conversations', bearer, { model })
    ).json()) as { id: string };

    const traceId = randomBytes(16).toString('hex');
    const clientSpanId = randomBytes(8).toString('hex');
    const response = await fetch(`${chat.url}/api/conversations/${conversation.id}/messages`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${bearer}`,
        'content-type': 'application/json',
        traceparent: `00-${traceId}-${clientSpanId}-01`,
      },
      body: JSON.stringify({ content: 'hello through chat' }),
    });
    expect(response.status).toBe(200);
    await response.text();
    expect(response.headers.get('x-switchyard-trace-id')).toBe(traceId);

    const chatSpan = await waitFor(
      () =>
        receiver
          .inTrace(traceId)
          .find((span) => span.service === 'chat' && span.kind === SPAN_KIND.server),
      { what: "the chat app's request span" },
    );
    expect(chatSpan.parentSpanId).toBe(clientSpanId);
    const edgeSpan = await waitFor(
      () =>
        receiver
          .inTrace(traceId)
          .find((span) => span.service === 'edge' && span.kind === SPAN_KIND.server),
      { what: "the edge's span of the chat app's call" },
    );
    const chatCall = receiver
      .inTrace(traceId)
      .find((span) => span.spanId === edgeSpan.parentSpanId);
    expect(chatCall).toMatchObject({ service: 'chat', kind: SPAN_KIND.client });
    const secrets = [token.key, chatAdmin.password, bearer];
    for (const span of receiver.inTrace(traceId)) {
      for (const value of Object.values(span.attrs)) {
        for (const secret of secrets) expect(String(value)).not.toContain(secret);
      }
    }
  });
});
