import { randomUUID } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { REDIS, type RedisClient } from '@switchyard/messaging';

// One active router, any number of standbys: the leader holds a lock in Redis and renews
// it; if it dies, the lock expires and a standby takes over within the lock's lifetime.

const LOCK_KEY = 'router:leader';
export const LOCK_TTL_MS = 5_000;
const RENEW_EVERY_MS = LOCK_TTL_MS / 3;

const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

export type LeadershipListener = (leading: boolean) => void;

@Injectable()
export class LeaderLock implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('LeaderLock');
  readonly instanceId = randomUUID();
  private leading = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly listeners: LeadershipListener[] = [];

  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  get isLeader(): boolean {
    return this.leading;
  }

  onChange(listener: LeadershipListener): void {
    this.listeners.push(listener);
  }

  onApplicationBootstrap(): void {
    void this.tick();
  }

  private async tick(): Promise<void> {
    let held = false;
    try {
      held = this.leading
        ? (await this.redis.eval(RENEW, 1, LOCK_KEY, this.instanceId, LOCK_TTL_MS)) === 1
        : (await this.redis.set(LOCK_KEY, this.instanceId, 'PX', LOCK_TTL_MS, 'NX')) === 'OK';
    } catch (error) {
      // Without Redis the lock cannot be proven held: step down rather than risk two leaders.
      if (this.leading) this.logger.warn(`cannot renew leadership: ${(error as Error).message}`);
    }
    if (this.stopped) {
      // Shut down while this tick waited on Redis: arm no other, and hand back what it took.
      if (held) await this.release();
      return;
    }
    this.set(held);
    this.timer = setTimeout(() => void this.tick(), RENEW_EVERY_MS);
  }

  private set(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.logger.log(leading ? 'this router is now the leader' : 'this router is now a standby');
    for (const listener of this.listeners) listener(leading);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.leading) {
      // Hand over at once instead of making the standby wait for the lock to expire.
      await this.release();
      this.leading = false;
    }
  }

  private async release(): Promise<void> {
    await this.redis.eval(RELEASE, 1, LOCK_KEY, this.instanceId).catch(() => undefined);
  }
}
