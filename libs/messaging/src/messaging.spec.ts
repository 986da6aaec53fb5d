import { Controller, Module, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  Events,
  Messages,
  type RoutingSnapshot,
  type TokenChangedEvent,
} from '@switchyard/contracts';
import { currentRequestId, runWithRequestId } from '@switchyard/observability';
import { WAIT_TIMEOUT_MS, waitFor } from '@switchyard/testing';
import { randomBytes } from 'node:crypto';
import { BUS_CLIENT, EventBus, OnEvent, OnMessage } from './event-bus.js';
import { MessagingModule } from './messaging.module.js';
import { NamespacedRedisServer, busConnectionOf } from './transport.js';

// Events and requests over the real Redis transport, in a namespace of the test's own.

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const received: { payload: TokenChangedEvent; requestId: string | undefined }[] = [];

@Controller()
class Handlers {
  @OnEvent(Events.TokenChanged)
  tokenChanged(payload: TokenChangedEvent): void {
    received.push({ payload, requestId: currentRequestId() });
  }

  @OnMessage(Messages.GetRoutingSnapshot)
  snapshot(): RoutingSnapshot {
    return { version: 7, generatedAt: 1, channels: [] };
  }
}

function namespace(): string {
  return `t${randomBytes(4).toString('hex')}`;
}

async function server(prefix: string, serverUrl = url): Promise<INestMicroservice> {
  @Module({ controllers: [Handlers] })
  class HandlerModule {}
  const app = await NestFactory.createMicroservice(HandlerModule, {
    strategy: new NamespacedRedisServer({ url: serverUrl, prefix }),
    logger: false,
  });
  await app.listen();
  return app;
}

async function bus(prefix: string, busUrl = url) {
  @Module({ imports: [MessagingModule.forRoot({ url: busUrl, prefix })] })
  class ClientModule {}
  const context = await NestFactory.createApplicationContext(ClientModule, { logger: false });
  return { context, bus: context.get(EventBus) };
}

/** Waits until the handler has received the event of this token. */
const receivedToken = (tokenId: number) =>
  waitFor(() => received.some((r) => r.payload.tokenId === tokenId), {
    what: `the event of token ${tokenId}`,
  });

/**
 * Publishes a valid event after the ones a test expects to be dropped and waits for it: the
 * subscriber reads in publishing order, so once it is in, whatever came before it was
 * either delivered or dropped.
 */
async function afterEverythingBefore(publisher: EventBus): Promise<void> {
  await publisher.publish(Events.TokenChanged, {
    tokenId: 0,
    keyHash: 'marker',
    action: 'deleted',
  });
  await receivedToken(0);
  received.splice(
    received.findIndex((r) => r.payload.tokenId === 0),
    1,
  );
}

describe('messaging over Redis', () => {
  const prefix = namespace();
  let handlers: INestMicroservice;
  let client: Awaited<ReturnType<typeof bus>>;

  beforeAll(async () => {
    handlers = await server(prefix);
    client = await bus(prefix);
  });

  afterAll(async () => {
    await client.context.close();
    await handlers.close();
  });

  beforeEach(() => {
    received.length = 0;
  });

  it('delivers a valid event to its handler, with the request id of the publisher', async () => {
    await runWithRequestId('req-42', () =>
      client.bus.publish(Events.TokenChanged, { tokenId: 3, keyHash: 'abc', action: 'updated' }),
    );
    await receivedToken(3);
    expect(received).toEqual([
      { payload: { tokenId: 3, keyHash: 'abc', action: 'updated' }, requestId: 'req-42' },
    ]);
  });

  it('drops an event whose payload does not match its contract', async () => {
    await client.bus.publish(Events.TokenChanged, {
      tokenId: 'three',
      keyHash: 1,
      action: 'exploded',
    } as never);
    await afterEverythingBefore(client.bus);
    expect(received).toEqual([]);
  });

  it('answers a request', async () => {
    await expect(
      client.bus.request(Messages.GetRoutingSnapshot, {}, WAIT_TIMEOUT_MS),
    ).resolves.toEqual({
      version: 7,
      generatedAt: 1,
      channels: [],
    });
  });

  it('keeps apart installations that differ only in the Redis database index', async () => {
    const shared = namespace();
    const inDatabase = (database: number) => {
      const databaseUrl = new URL(url);
      databaseUrl.pathname = `/${database}`;
      return busConnectionOf({ REDIS_URL: databaseUrl.toString(), REDIS_PREFIX: shared });
    };
    const [zero, seven] = [inDatabase(0), inDatabase(7)];
    expect(zero.prefix).toBe(shared);
    expect(seven.prefix).toBe(`${shared}.db7`);
    const listening = await server(zero.prefix, zero.url);
    const neighbour = await bus(seven.prefix, seven.url);
    const own = await bus(zero.prefix, zero.url);
    try {
      await neighbour.bus.publish(Events.TokenChanged, {
        tokenId: 7,
        keyHash: 'n',
        action: 'deleted',
      });
      await expect(neighbour.bus.request(Messages.GetRoutingSnapshot, {}, 300)).rejects.toThrow();
      // Published after the neighbour's, so read after it had it come through.
      await own.bus.publish(Events.TokenChanged, { tokenId: 8, keyHash: 'o', action: 'deleted' });
      await receivedToken(8);
      expect(received.map((r) => r.payload.tokenId)).toEqual([8]);
    } finally {
      await Promise.all([neighbour.context.close(), own.context.close()]);
      await listening.close();
    }
  });

  it('ends a request still unanswered at shutdown, and sends nothing after it', async () => {
    // Nobody answers in this namespace; the context closes while the request is connecting.
    const lonely = await bus(namespace());
    const unanswered = lonely.bus.request(Messages.GetRoutingSnapshot, {}, 60_000);
    const closed = lonely.context.close();
    await expect(unanswered).rejects.toThrow(/not answered, the service is shutting down/);
    await closed;
    await expect(
      lonely.bus.publish(Events.TokenChanged, { tokenId: 1, keyHash: 'k', action: 'deleted' }),
    ).rejects.toThrow(/not sent, the service is shutting down/);
    // Jest's open-handle check (and a process that must exit) would hang on a leaked pair.
    const client = lonely.context.get<{ pubClient: unknown; subClient: unknown }>(BUS_CLIENT);
    expect([client.pubClient, client.subClient]).toEqual([null, null]);
  });

  it('keeps namespaces apart', async () => {
    const other = await bus(namespace());
    try {
      await other.bus.publish(Events.TokenChanged, { tokenId: 9, keyHash: 'x', action: 'deleted' });
      await afterEverythingBefore(client.bus);
      expect(received).toEqual([]);
      await expect(other.bus.request(Messages.GetRoutingSnapshot, {}, 300)).rejects.toThrow();
    } finally {
      await other.context.close();
    }
  });
});
