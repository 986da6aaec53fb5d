import { Controller, Module, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Events, Queues, type TokenChangedEvent } from '@switchyard/contracts';
import {
  EventBus,
  MessagingModule,
  NamespacedRedisServer,
  OnEvent,
  QueueConnection,
  queuePrefixFor,
  ReplicatedWrites,
  UsageQueue,
  REDIS,
  WriteNotReplicatedError,
  busConnectionOf,
  createIoRedis,
  type BusConnection,
  type RedisClient,
} from '@switchyard/messaging';
import { SpendLedger } from '@switchyard/spend';
import { waitFor } from '@switchyard/testing';
import { Worker } from 'bullmq';
import { randomBytes } from 'node:crypto';
import { ClusterTopology, SentinelTopology } from '../support/redis-topology.js';

// The suite's Redis clients on real Sentinels and a real cluster (docs/scaling.md, "What
// was proven"): every kind of use — the bus's pub/sub, a BullMQ queue, the spend ledger's
// Lua scripts — through the one factory in libs/messaging, and through a failover: the
// master killed, the same clients follow the master Sentinel promotes and work again. A
// write that must survive its master's death counts once the master's replica has it.

const received: number[] = [];

@Controller()
class Handlers {
  @OnEvent(Events.TokenChanged)
  tokenChanged(payload: TokenChangedEvent): void {
    received.push(payload.tokenId);
  }
}

@Module({ controllers: [Handlers] })
class HandlerModule {}

/** One service's worth of clients on a connection: bus, keyed client, queues. */
async function clientsOn(connection: BusConnection) {
  const handlers: INestMicroservice = await NestFactory.createMicroservice(HandlerModule, {
    strategy: new NamespacedRedisServer(connection),
    logger: false,
  });
  await handlers.listen();
  @Module({ imports: [MessagingModule.forRoot(connection)] })
  class ClientModule {}
  const context = await NestFactory.createApplicationContext(ClientModule, { logger: false });
  const queues = context.get(QueueConnection);
  // The usage queue itself, as the edge opens it: its keys share a slot in a cluster.
  const queue = UsageQueue.open(queues);
  queue.on('error', () => undefined);
  const done: string[] = [];
  const worker = new Worker(
    Queues.Usage,
    (job) => {
      done.push(job.id!);
      return Promise.resolve();
    },
    { connection: queues.connectionOptions(), prefix: queues.prefix },
  );
  worker.on('error', () => undefined);
  const ledger = new SpendLedger(context.get<RedisClient>(REDIS));
  let sequence = 0;

  return {
    /** An event, a job and a hold with its settlement: each round trip once. */
    async roundTrip(): Promise<true> {
      const n = ++sequence;
      const tokenId = n * 1000 + Number.parseInt(randomBytes(1).toString('hex'), 16);
      await context.get(EventBus).publish(Events.TokenChanged, {
        tokenId,
        keyHash: 'k',
        action: 'updated',
      });
      const jobId = await queue.addBatch([
        {
          requestId: `req-${tokenId}`,
          tokenId,
          channelId: null,
          keyId: null,
          endpoint: 'chat.completions',
          model: 'scale-check',
          upstreamModel: null,
          stream: false,
          status: 200,
          errorCode: null,
          usage: null,
          latencyMs: n,
          firstByteMs: null,
          attempts: 1,
          clientIp: null,
          requestedAt: Date.now(),
        },
      ]);
      const requestId = `req-${tokenId}`;
      // Two accounts on two slots: a cluster settles them in one call each.
      const accounts = ['token:1', `token:${tokenId}`];
      const held = await ledger.reserve(
        requestId,
        [{ account: accounts[0]!, limit: 1_000_000, amount: 5 }],
        (names) => Promise.resolve(names.map(() => 0)),
      );
      expect(held.kind).toBe('held');
      await ledger.settle(
        accounts.map((account) => ({ account, total: 5, requestIds: [requestId] })),
      );
      await waitFor(() => received.includes(tokenId) && done.includes(jobId), {
        what: `event and job ${tokenId}`,
        timeoutMs: 10_000,
      });
      return true;
    },
    async close(): Promise<void> {
      await Promise.allSettled([worker.close(), queue.close()]);
      await Promise.allSettled([context.close(), handlers.close()]);
    },
  };
}

/**
 * Writes through `ReplicatedWrites` on the connection's own client: they count with the
 * replica up, fail with it stopped (the master has the write, its replica not), and count
 * again once it is back.
 */
async function replicatedWritesOn(
  connection: BusConnection,
  key: string,
  pauseReplica: () => Promise<() => void>,
): Promise<void> {
  const client = createIoRedis(connection.redis!, { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  const writes = new ReplicatedWrites(client, key, 300);
  try {
    // A replica's first full sync may still be under way: until it is, nothing counts.
    await waitFor(() => writes.write(() => client.set(key, 'first')), {
      what: 'a replicated write',
      timeoutMs: 15_000,
    });
    const resume = await pauseReplica();
    try {
      const started = performance.now();
      await expect(writes.write(() => client.set(key, 'unreplicated'))).rejects.toThrow(
        WriteNotReplicatedError,
      );
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
      expect(await client.get(key)).toBe('unreplicated');
    } finally {
      resume();
    }
    await waitFor(() => writes.write(() => client.set(key, 'again')), {
      what: 'a replicated write once the replica is back',
      timeoutMs: 15_000,
    });
  } finally {
    client.disconnect();
  }
}

describe('Redis Sentinel', () => {
  const topology = new SentinelTopology();
  let clients: Awaited<ReturnType<typeof clientsOn>> | undefined;

  afterAll(async () => {
    await clients?.close();
    await topology.stop();
  });

  let connection: BusConnection;

  it('counts a write once the replica has it, and says so when it has not', async () => {
    await topology.startAll();
    connection = busConnectionOf({
      REDIS_URL: topology.url,
      REDIS_PREFIX: `s${randomBytes(3).toString('hex')}`,
    });
    await replicatedWritesOn(connection, `${connection.prefix}:replicated`, () =>
      Promise.resolve(topology.pauseReplica()),
    );
  });

  it('serves bus, queue and scripts, and follows the master through a failover', async () => {
    expect(connection.redis?.mode).toBe('sentinel');
    clients = await clientsOn(connection);
    await clients.roundTrip();

    const before = topology.masterPort;
    await topology.killMaster();
    await waitFor(async () => (await topology.currentMasterPort()) === topology.replicaPort, {
      what: 'the replica promoted',
      timeoutMs: 30_000,
    });
    expect(await topology.currentMasterPort()).not.toBe(before);
    // The same clients, untouched since: they find the new master on their own.
    await waitFor(() => clients!.roundTrip(), {
      what: 'round trips on the new master',
      timeoutMs: 30_000,
      intervalMs: 250,
    });
    await clients.roundTrip();
  });
});

describe('Redis Cluster', () => {
  const topology = new ClusterTopology();
  let clients: Awaited<ReturnType<typeof clientsOn>> | undefined;

  afterAll(async () => {
    await clients?.close();
    await topology.stop();
  });

  let connection: BusConnection;

  it("counts a write once the replica of its slot's master has it, and says so when it has not", async () => {
    await topology.startAll();
    connection = busConnectionOf({
      REDIS_URL: 'redis://127.0.0.1',
      REDIS_CLUSTER_NODES: topology.nodes,
      REDIS_PREFIX: `c${randomBytes(3).toString('hex')}`,
    });
    // The queue's hash tag: the master asked is that of its slot, not any node's.
    const key = `${queuePrefixFor(connection.redis!, `${connection.prefix}:bull`)}:replicated`;
    await replicatedWritesOn(connection, key, () => topology.pauseReplicaOf(key));
  });

  it('serves bus, queue and scripts with every script on one slot, and through a master failover', async () => {
    expect(connection.redis?.mode).toBe('cluster');
    clients = await clientsOn(connection);
    for (let i = 0; i < 3; i++) await clients.roundTrip();

    // The master of the usage queue's slot dies; its replica is promoted by the others.
    const queueKey = `${queuePrefixFor(connection.redis!, `${connection.prefix}:bull`)}:x`;
    const killed = await topology.killMasterOf(queueKey);
    const started = performance.now();
    await waitFor(async () => (await topology.masterOf(queueKey)) !== killed || undefined, {
      what: 'a replica promoted for the queue slot',
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    // The same clients, untouched: they learn the new map of slots on their own.
    await waitFor(() => clients!.roundTrip(), {
      what: 'round trips after the failover',
      timeoutMs: 30_000,
      intervalMs: 250,
    });
    process.stdout.write(
      `\ncluster master SIGKILL: round trips again ${Math.round(performance.now() - started)} ms after\n`,
    );
    await clients.roundTrip();
  });
});
