import { Cluster, type Redis } from 'ioredis';
import { type AnyRedis } from './redis-connection.js';

// Redis replicates asynchronously: a master that dies before its replica has a write it
// acknowledged takes the write with it, and the replica promoted in its place never had it.
// A producer that forgets what it wrote once Redis has it (the edge's usage batches) asks
// the master to WAIT for one replica after the write. WAIT counts the writes of the
// connection it is sent on, so it goes to the master that took the write, on the client's
// own connection to it, and only counts if that connection was not lost in between: a lost
// connection's commands are resent by ioredis on a new one, where WAIT would have nothing
// to wait for. A master without replicas (one server, or its replica down) has none to wait
// for; the caller's usual fallbacks (the append-only file, a spool) are all there is then.
// (docs/reliability.md, "Limits of what is shown")

/** How long a master's count of replicas is trusted before it is read again. */
const REPLICAS_KNOWN_FOR_MS = 1_000;

/** The write reached a master, but no replica said it has it in time; it may be lost. */
export class WriteNotReplicatedError extends Error {
  constructor(reason: string) {
    super(`the write may be lost with its master: ${reason}`);
    this.name = 'WriteNotReplicatedError';
  }
}

interface ReplicaCount {
  replicas: number;
  readAt: number;
}

/** Writes to one key's master that count once a replica has them too. */
export class ReplicatedWrites {
  private slot: number | undefined;
  /** Each connection's losses: a write and its WAIT must be on one unbroken connection. */
  private readonly closes = new WeakMap<Redis, number>();
  private readonly counts = new WeakMap<Redis, ReplicaCount>();

  /**
   * @param client the client the writes go through (a cluster's too)
   * @param key a key the writes touch: in a cluster, its slot's master is the one asked
   * @param timeoutMs how long a replica may take to acknowledge
   */
  constructor(
    private readonly client: AnyRedis,
    private readonly key: string,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Runs `write` and resolves once one replica of the master that took it has it, or at once
   * when that master has no replica. Throws `WriteNotReplicatedError` when no replica
   * acknowledged in time, or the connection or the key's master changed during the write:
   * the write may have been taken, and the caller keeps it to write again.
   */
  async write<T>(write: () => Promise<T>): Promise<T> {
    // The write is always attempted: in a cluster, it is what makes the client learn a new
    // map of slots after a failover (a MOVED reply), which the master looked up here needs.
    const master = await this.masterOfKey().catch(() => undefined);
    const closes = master && this.closesOf(master);
    const [value, replicas] = await Promise.all([write(), master && this.replicasOf(master)]);
    if (master === undefined || (await this.masterOfKey()) !== master) {
      throw new WriteNotReplicatedError(
        "the key's master was not known, or changed, during the write",
      );
    }
    if (replicas === 0) return value;
    const acknowledged = Number(await master.call('WAIT', 1, this.timeoutMs));
    if (this.closesOf(master) !== closes) {
      throw new WriteNotReplicatedError('the connection to the master was lost');
    }
    if (acknowledged < 1) {
      throw new WriteNotReplicatedError(`no replica acknowledged within ${this.timeoutMs} ms`);
    }
    return value;
  }

  /**
   * The connection to the master serving the key (the client itself unless it is a
   * cluster's), or undefined while a cluster's map of slots names none it is connected to.
   */
  private async masterOfKey(): Promise<Redis | undefined> {
    const cluster = this.client;
    if (!(cluster instanceof Cluster)) return cluster;
    this.slot ??= Number(await cluster.call('CLUSTER', 'KEYSLOT', this.key));
    const address = cluster.slots[this.slot]?.[0];
    return cluster
      .nodes('master')
      .find((node) => `${node.options.host}:${node.options.port}` === address);
  }

  private closesOf(connection: Redis): number {
    const closes = this.closes.get(connection);
    if (closes !== undefined) return closes;
    this.closes.set(connection, 0);
    connection.on('close', () => {
      this.closes.set(connection, this.closes.get(connection)! + 1);
      // A Sentinel client reconnects to whichever server is master now.
      this.counts.delete(connection);
    });
    return 0;
  }

  /** The master's replicas as it last said, read again once a second. */
  private async replicasOf(master: Redis): Promise<number> {
    const known = this.counts.get(master);
    const now = performance.now();
    if (known && now - known.readAt < REPLICAS_KNOWN_FOR_MS) return known.replicas;
    const info = String(await master.call('INFO', 'replication'));
    const replicas = Number(/^connected_slaves:(\d+)/m.exec(info)?.[1] ?? 0);
    this.counts.set(master, { replicas, readAt: now });
    return replicas;
  }
}
