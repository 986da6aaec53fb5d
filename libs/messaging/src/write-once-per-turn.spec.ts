import { Redis } from 'ioredis';
import type { Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { setImmediate as nextCheck } from 'node:timers/promises';
import { redisReady } from './messaging.module.js';
import {
  atEndOfTurn,
  createIoRedis,
  redisConnectionOptions,
  writeOncePerTurn,
} from './redis-connection.js';

// The keyed client's commands of one turn leave in one write (docs/performance.md, "Redis
// writes, one per turn"), against the real Redis: replies in order and to their commands,
// an error to its own command only, the socket open for writes again after the turn, and
// a command corked on a lost connection sent again on the next, as ioredis does uncorked.

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function client() {
  const redis = createIoRedis(redisConnectionOptions(url), {
    keyPrefix: `t${randomBytes(4).toString('hex')}:`,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  });
  if (!(redis instanceof Redis)) throw new Error('a standalone client was expected');
  writeOncePerTurn(redis);
  return redis;
}

/** The commands in each write `socket` makes from now on (several chunks: one `writev`). */
function writesOf(socket: Socket): number[] {
  const writes: number[] = [];
  const write = socket._writev?.bind(socket);
  socket._writev = (chunks, callback) => {
    writes.push(chunks.length);
    write!(chunks, callback);
  };
  return writes;
}

it('sends a turn of commands in one write, each answered in order', async () => {
  const redis = client();
  try {
    await redisReady(redis);
    const socket = redis.stream;
    const writes = writesOf(socket);
    const replies = Array.from({ length: 50 }, () => redis.incr('counter'));
    replies.push(redis.hget('counter', 'field').catch((error: Error) => error.message) as never);
    expect(socket.writableCorked).toBe(1);
    const answers = await Promise.all(replies);
    expect(answers.slice(0, 50)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(String(answers[50])).toMatch(/WRONGTYPE/);
    expect(writes).toEqual([51]);
    await nextCheck();
    expect(socket.writableCorked).toBe(0);
    expect(await redis.get('counter')).toBe('50');
    await redis.del('counter');
  } finally {
    redis.disconnect();
  }
});

it('a command corked on a connection that is lost is sent again on the next, as without the cork', async () => {
  const redis = client();
  try {
    await redisReady(redis);
    await redis.set('k', 'before');
    const lost = redis.get('k');
    const socket = redis.stream;
    expect(socket.writableCorked).toBe(1);
    socket.destroy();
    // ioredis resends what was unanswered once it has reconnected (autoResendUnfulfilledCommands).
    await expect(lost).resolves.toBe('before');
    expect(redis.stream).not.toBe(socket);
    await expect(redis.set('k', 'after')).resolves.toBe('OK');
    expect(await redis.get('k')).toBe('after');
    await redis.del('k');
  } finally {
    redis.disconnect();
  }
});

it("runs a task at the end of the turn, its commands in the turn's one write", async () => {
  const redis = client();
  try {
    await redisReady(redis);
    const socket = redis.stream;
    const writes = writesOf(socket);
    const order: string[] = [];
    let fromTask: Promise<number> | undefined;
    atEndOfTurn(redis, () => {
      order.push('task');
      fromTask = redis.incr('turn');
    });
    const before = redis.incr('turn');
    order.push('command');
    expect(await before).toBe(1);
    expect(await fromTask).toBe(2);
    expect(order).toEqual(['command', 'task']);
    expect(writes).toEqual([2]);

    // A task alone in its turn starts the write itself, and leaves the socket uncorked.
    let alone: Promise<number> | undefined;
    atEndOfTurn(redis, () => {
      alone = redis.incr('turn');
    });
    await nextCheck();
    expect(await alone).toBe(3);
    expect(socket.writableCorked).toBe(0);
    await redis.del('turn');
  } finally {
    redis.disconnect();
  }
});
