import { type Socket } from 'node:net';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

// Where the suite's Redis is and how to reach it, for every client of every service (the
// bus's pub/sub pair, BullMQ, the keyed client of limits, holds, caches and locks, the
// edge's usage queue): one parser and one factory, so a deployment moves from one server
// to Sentinel or Cluster by its environment alone (docs/scaling.md, "Redis").
//
//   redis[s]://[user:password@]host:port[/db]                       one server (the default)
//   redis[s]+sentinel://[:password@]host1:26379,host2:26379/name[/db] the master Sentinel names
//   REDIS_CLUSTER_NODES=host1:6379,host2:6379                         a Redis Cluster: REDIS_URL
//                                                                     then gives only the
//                                                                     credentials and TLS

export interface RedisEndpoint {
  host: string;
  port: number;
}

export type RedisConnectionOptions =
  | { mode: 'standalone'; url: string; options: RedisOptions }
  | { mode: 'sentinel'; options: RedisOptions }
  | { mode: 'cluster'; nodes: RedisEndpoint[]; options: RedisOptions };

export type RedisTopology = RedisConnectionOptions['mode'];

export class RedisConfigurationError extends Error {
  override readonly name = 'RedisConfigurationError';
}

const SENTINEL = /^(rediss?)\+sentinel:\/\/(?:([^@/]*)@)?([^/]+)\/([^/?#]+)(?:\/(\d+))?\/?$/;

function endpoints(list: string, defaultPort: number, what: string): RedisEndpoint[] {
  const nodes = list
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const match = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(entry);
      const port = Number(match?.[2] ?? defaultPort);
      if (!match || port < 1 || port > 65_535) {
        throw new RedisConfigurationError(`${what}: "${entry}" is not host:port`);
      }
      return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
    });
  if (nodes.length === 0) throw new RedisConfigurationError(`${what} names no host`);
  return nodes;
}

function credentials(userinfo: string | undefined): Pick<RedisOptions, 'username' | 'password'> {
  if (!userinfo) return {};
  const colon = userinfo.indexOf(':');
  const username = decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon));
  const password = colon < 0 ? '' : decodeURIComponent(userinfo.slice(colon + 1));
  return { ...(username ? { username } : {}), ...(password ? { password } : {}) };
}

/**
 * How to reach the Redis that REDIS_URL (and REDIS_CLUSTER_NODES) name. Throws a
 * RedisConfigurationError naming what is wrong; never echoes a password.
 */
export function redisConnectionOptions(
  url: string,
  env: { REDIS_CLUSTER_NODES?: string | undefined } = {},
): RedisConnectionOptions {
  const sentinel = SENTINEL.exec(url);
  if (sentinel) {
    if (env.REDIS_CLUSTER_NODES) {
      throw new RedisConfigurationError(
        'REDIS_CLUSTER_NODES and a redis+sentinel:// REDIS_URL exclude each other',
      );
    }
    const [, scheme, userinfo, hosts, name, db] = sentinel;
    return {
      mode: 'sentinel',
      options: {
        // The password is the data nodes' (requirepass); Sentinels are asked without one.
        ...credentials(userinfo),
        sentinels: endpoints(hosts!, 26_379, 'REDIS_URL (Sentinel form)'),
        name: decodeURIComponent(name!),
        ...(db ? { db: Number(db) } : {}),
        ...(scheme === 'rediss' ? { tls: {}, enableTLSForSentinelMode: true } : {}),
        // A failover is a reconnection to the new master, not an error to the callers
        // that wait; a replica that was master answers READONLY until then.
        reconnectOnError: (error) => error.message.startsWith('READONLY'),
      },
    };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RedisConfigurationError('REDIS_URL is not a URL');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new RedisConfigurationError(
      `REDIS_URL: ${parsed.protocol}// is none of redis://, rediss://, redis+sentinel://`,
    );
  }
  if (env.REDIS_CLUSTER_NODES) {
    if (parsed.pathname.length > 1 && parsed.pathname !== '/0') {
      throw new RedisConfigurationError(
        'a Redis Cluster has database 0 only: drop it from REDIS_URL',
      );
    }
    return {
      mode: 'cluster',
      nodes: endpoints(env.REDIS_CLUSTER_NODES, 6_379, 'REDIS_CLUSTER_NODES'),
      options: {
        ...credentials(
          parsed.username || parsed.password ? `${parsed.username}:${parsed.password}` : undefined,
        ),
        ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
      },
    };
  }
  return { mode: 'standalone', url, options: {} };
}

/** The database index the connection selects: channels are shared by all of a server's. */
export function redisDatabaseOf(connection: RedisConnectionOptions): number {
  if (connection.mode === 'standalone') {
    return Number(new URL(connection.url).pathname.slice(1) || 0);
  }
  return connection.options.db ?? 0;
}

/** A client of either kind: the commands the suite uses are the same on both. */
export type AnyRedis = Redis | Cluster;

/**
 * A new client for `connection` with the caller's options (retries, key prefix, offline
 * queue). In cluster mode, the per-node options go to every node, and `extra` the cluster's
 * own (`maxRetriesPerRequest`, `keyPrefix` and the offline queue are the cluster's).
 */
export function createIoRedis(
  connection: RedisConnectionOptions,
  options: RedisOptions = {},
  extra: Omit<ClusterOptions, 'redisOptions'> = {},
): AnyRedis {
  switch (connection.mode) {
    case 'standalone':
      return new Redis(connection.url, options);
    case 'sentinel':
      return new Redis({ ...connection.options, ...options });
    case 'cluster': {
      const { keyPrefix, enableOfflineQueue, retryStrategy, lazyConnect, ...node } = options;
      return new Cluster(connection.nodes, {
        ...extra,
        ...(keyPrefix !== undefined ? { keyPrefix } : {}),
        ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
        ...(lazyConnect !== undefined ? { lazyConnect } : {}),
        ...(retryStrategy ? { clusterRetryStrategy: (times) => retryStrategy(times) } : {}),
        redisOptions: { ...connection.options, ...node },
      });
    }
  }
}

/**
 * BullMQ's key prefix. In a cluster every key of a queue must share a slot (its scripts
 * touch several), so the prefix is the hash tag: `{sy:bull}:usage:...`.
 */
export function queuePrefixFor(connection: RedisConnectionOptions, prefix: string): string {
  return connection.mode === 'cluster' ? `{${prefix}}` : prefix;
}

/**
 * Sends the commands of one event-loop turn in one write: the client's socket is corked at
 * the turn's first command and uncorked at `setImmediate`, once the turn's I/O callbacks
 * (every request read in it) have run. On this kind of machine a write to a loopback
 * socket costs more than the command's JavaScript, since the kernel runs Redis's receiving
 * side inside it (docs/performance.md, "Redis writes, one per turn"). Order, replies and
 * errors are those of the writes one by one; a socket lost while corked loses its commands
 * as it would lose them unsent, and ioredis answers them the same way.
 */
export function writeOncePerTurn(client: Redis): void {
  const sendCommand = client.sendCommand.bind(client);
  let corked: Socket | undefined;
  let ending = false;
  const tasks: (() => void)[] = [];
  const endTurn = () => {
    try {
      // Tasks first (they must not throw): their commands join the turn's write, or start
      // it, before the socket is uncorked.
      for (let i = 0; i < tasks.length; i += 1) tasks[i]!();
    } finally {
      tasks.length = 0;
      ending = false;
      corked?.uncork();
      corked = undefined;
    }
  };
  const endThisTurn = () => {
    if (ending) return;
    ending = true;
    setImmediate(endTurn);
  };
  client.sendCommand = (command, stream) => {
    if (corked === undefined && client.status === 'ready') {
      const socket = (stream ?? client.stream) as Socket | undefined;
      if (socket?.writable) {
        corked = socket;
        socket.cork();
        endThisTurn();
      }
    }
    return sendCommand(command, stream);
  };
  turnEnds.set(client, (task) => {
    tasks.push(task);
    endThisTurn();
  });
}

const turnEnds = new WeakMap<object, (task: () => void) => void>();

/**
 * Runs `task` at the end of this turn, just before the client's write of the turn's
 * commands, so the commands it sends leave in that write: a caller gathering the requests
 * of a turn into one command sends it there (the spend ledger's reservations). On a client
 * that does not write once per turn (a cluster's), at `setImmediate`.
 */
export function atEndOfTurn(client: AnyRedis, task: () => void): void {
  const schedule = turnEnds.get(client);
  if (schedule) schedule(task);
  else setImmediate(task);
}
