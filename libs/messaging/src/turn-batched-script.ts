import { atEndOfTurn, type AnyRedis } from './redis-connection.js';

// A Lua script called once per request on the hot path (a spend reservation, a limiter
// admission), whose calls of one event-loop turn go to Redis as one call: the script runs
// each of them in turn, atomically, and answers each its own reply. The call leaves at the
// turn's end, in the turn's one write ("Redis writes, one per turn" in
// docs/performance.md), after whatever the turn sent before it, so Redis sees the calls in
// the order they were made and a request waits for no more than the rest of its turn.

/**
 * At most this many calls in one: Redis runs a script alone, and a turn's worth of them at
 * once would keep every other client waiting for as long.
 */
const MAX_BATCH = 64;

/**
 * Runs `run(K, A)`, defined by the script's functions, once per call of the batch. ARGV:
 * the count, then per call its number of keys, its number of arguments and its arguments;
 * KEYS: the calls' keys in turn.
 */
const RUN_MANY = `
local replies = {}
local k, a = 0, 2
for r = 1, tonumber(ARGV[1]) do
  local keyCount, argCount = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local K, A = {}, {}
  for j = 1, keyCount do K[j] = KEYS[k + j] end
  for j = 1, argCount do A[j] = ARGV[a + 1 + j] end
  replies[r] = run(K, A)
  k = k + keyCount
  a = a + 2 + argCount
end
return replies
`;

type ScriptCommand<R> = (numberOfKeys: number, ...keysAndArgs: (string | number)[]) => Promise<R>;

interface QueuedCall<R> {
  keys: string[];
  args: (string | number)[];
  resolve: (reply: R) => void;
  reject: (error: unknown) => void;
}

export class TurnBatchedScript<R> {
  private readonly one: ScriptCommand<R>;
  private readonly many: ScriptCommand<R[]>;
  private queued: QueuedCall<R>[] = [];

  /**
   * @param functions Lua defining `local function run(K, A)`, K and A one call's KEYS and
   *   ARGV, returning its reply
   * @param batched false: every call is its own script call (a cluster's calls whose keys
   *   are on different slots cannot share one)
   */
  constructor(
    private readonly redis: AnyRedis,
    name: string,
    functions: string,
    private readonly batched = true,
  ) {
    redis.defineCommand(name, { lua: `${functions}\nreturn run(KEYS, ARGV)\n` });
    redis.defineCommand(`${name}Many`, { lua: `${functions}\n${RUN_MANY}` });
    const commands = redis as unknown as Record<string, ScriptCommand<never>>;
    this.one = commands[name]!.bind(redis);
    this.many = commands[`${name}Many`]!.bind(redis);
  }

  call(keys: string[], args: (string | number)[]): Promise<R> {
    if (!this.batched) return this.one(keys.length, ...keys, ...args);
    return new Promise((resolve, reject) => {
      if (this.queued.length === 0) atEndOfTurn(this.redis, () => this.send());
      this.queued.push({ keys, args, resolve, reject });
    });
  }

  private send(): void {
    const queued = this.queued;
    this.queued = [];
    for (let start = 0; start < queued.length; start += MAX_BATCH) {
      const batch = queued.slice(start, start + MAX_BATCH);
      if (batch.length === 1) {
        const [only] = batch as [QueuedCall<R>];
        this.one(only.keys.length, ...only.keys, ...only.args).then(only.resolve, only.reject);
        continue;
      }
      const keys: string[] = [];
      const args: (string | number)[] = [batch.length];
      for (const call of batch) {
        keys.push(...call.keys);
        args.push(call.keys.length, call.args.length, ...call.args);
      }
      this.many(keys.length, ...keys, ...args).then(
        (replies) => batch.forEach((call, i) => call.resolve(replies[i]!)),
        (error: unknown) => batch.forEach((call) => call.reject(error)),
      );
    }
  }
}
