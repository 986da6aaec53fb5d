import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import {
  Events,
  ROUTING_SNAPSHOT_KEY,
  RoutingSnapshot,
  type ChannelOutcome,
  type RestingChannel,
  type RoutedChannel,
} from '@switchyard/contracts';
import { ChannelStatus } from '@switchyard/db';
import { ChannelStore, type StoredChannel } from '@switchyard/gateway-store';
import { EventBus, REDIS, validatePayload, type RedisClient } from '@switchyard/messaging';
import { Counter, Gauge, Registry, redactAndCut, registerSecret } from '@switchyard/observability';
import { SecretCipher } from '@switchyard/security';
import { HealthBook, type HealthChange } from '../health/health-book.js';
import { LeaderLock } from '../leadership/leader-lock.js';

// The single authority on where requests may go. It keeps the channels from Postgres and
// the health of every account and channel, and, while it leads, publishes a versioned
// snapshot whenever what edges should do changes. Standbys keep the same state from the
// same events, so a takeover starts warm.

const VERSION_KEY = 'routing:version';
const PUBLISH_DEBOUNCE_MS = 50;
/** A key's stored status reason (ChannelKey.statusReason) is kept short. */
const MAX_REASON_CHARS = 500;
/** A safety net for missed `channel.changed` events. */
const RELOAD_EVERY_MS = 60_000;
/**
 * A ban that could not be stored (Postgres slow or away, or no router leading at that
 * moment, as during a takeover) is tried again this often, for as long as it is fresh.
 * An upstream that refuses a key sends one refusal per request: on a quiet gateway the
 * next one may be long in coming, so the first is not given up.
 */
const BAN_RETRY_EVERY_MS = 1_000;
const BAN_FRESH_FOR_MS = 30_000;

type KeyBan = Extract<HealthChange, { kind: 'key_banned' }>;

@Injectable()
export class RoutingAuthority implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RoutingAuthority');
  private channels: StoredChannel[] = [];
  /**
   * What this router last published while leading, each channel as serialized, to tell which
   * channels a change touched. Forgotten when it stops leading: another leader's versions
   * follow, so its next change is announced as one to read whole.
   */
  private published: {
    snapshot: RoutingSnapshot;
    channels: Map<number, string>;
    resting: string;
  } | null = null;
  private publishTimer: NodeJS.Timeout | undefined;
  private reloadTimer: NodeJS.Timeout | undefined;
  private loading: Promise<void> = Promise.resolve();
  private banRetryTimer: NodeJS.Timeout | undefined;
  /** Bans not stored yet, by key, with when they were first seen. */
  private readonly unstoredBans = new Map<number, { ban: KeyBan; seenAt: number }>();
  private readonly changes: Counter<'kind'>;

  constructor(
    private readonly store: ChannelStore,
    private readonly health: HealthBook,
    private readonly lock: LeaderLock,
    private readonly bus: EventBus,
    @Inject(REDIS) private readonly redis: RedisClient,
    registry: Registry,
    private readonly cipher: SecretCipher,
  ) {
    this.changes = new Counter({
      name: 'router_health_changes_total',
      help: 'Automatic health decisions: bans, cooldowns, breakers, probes.',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.exportRoutingState(registry);
  }

  /**
   * What the snapshot would say now, read at each scrape: channels and models by whether
   * they take traffic, so an alert fires when every channel of a model rests
   * (docs/operations.md, "Alerts"). Wildcard model patterns count under their pattern.
   */
  private exportRoutingState(registry: Registry): void {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const authority = this;
    new Gauge({
      name: 'router_is_leader',
      help: '1 on the router that publishes snapshots, 0 on standbys.',
      registers: [registry],
      collect() {
        this.set(authority.lock.isLeader ? 1 : 0);
      },
    });
    new Gauge({
      name: 'router_channels',
      help: 'Channels the router knows, by state: routable (takes traffic) or resting (breaker open, or every key disabled automatically).',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        const { channels, resting } = authority.build(Date.now());
        this.set({ state: 'routable' }, channels.length);
        this.set({ state: 'resting' }, resting.length);
      },
    });
    new Gauge({
      name: 'router_model_channels',
      help: 'Channels serving each model, by state: routable or resting.',
      labelNames: ['model', 'state'],
      registers: [registry],
      collect() {
        const { channels, resting } = authority.build(Date.now());
        this.reset();
        const counts = new Map<string, { routable: number; resting: number }>();
        const count = (models: string[], state: 'routable' | 'resting') => {
          for (const model of new Set(models)) {
            const entry = counts.get(model) ?? { routable: 0, resting: 0 };
            entry[state] += 1;
            counts.set(model, entry);
          }
        };
        for (const channel of channels) count(channel.models, 'routable');
        for (const channel of resting) count(channel.models, 'resting');
        for (const [model, entry] of counts) {
          this.set({ model, state: 'routable' }, entry.routable);
          this.set({ model, state: 'resting' }, entry.resting);
        }
      },
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    this.lock.onChange((leading) => {
      if (leading) this.schedulePublish();
      else this.published = null;
    });
    await this.reload().catch((error: unknown) =>
      this.logger.error(`cannot load channels: ${(error as Error).message}`),
    );
    this.reloadTimer = setInterval(
      () => void this.reload().catch(() => undefined),
      RELOAD_EVERY_MS,
    );
  }

  onApplicationShutdown(): void {
    clearTimeout(this.publishTimer);
    clearInterval(this.reloadTimer);
    clearTimeout(this.banRetryTimer);
  }

  get routable(): readonly StoredChannel[] {
    return this.channels;
  }

  /** Every channel from Postgres: at start, and as a safety net for missed announcements. */
  reload(): Promise<void> {
    return this.inOrder(async () => {
      this.channels = await this.store.loadRoutable();
    });
  }

  /**
   * One channel from Postgres, once it is announced as changed: with a thousand channels
   * and a hundred thousand keys, a whole reload for each change took seconds.
   */
  reloadChannel(channelId: number): Promise<void> {
    return this.inOrder(async () => {
      const [loaded] = await this.store.loadRoutable(channelId);
      const others = this.channels.filter((channel) => channel.id !== channelId);
      this.channels = loaded ? [...others, loaded].sort((a, b) => a.id - b.id) : others;
    });
  }

  /** Loads one after another, so an older read never lands after a newer one. */
  private inOrder(load: () => Promise<void>): Promise<void> {
    const loaded = this.loading.then(load);
    this.loading = loaded.catch(() => undefined);
    return loaded.then(() => this.schedulePublish());
  }

  async handleOutcomes(outcomes: ChannelOutcome[]): Promise<void> {
    for (const outcome of outcomes) {
      const change = this.health.record(outcome);
      if (!change) continue;
      this.changes.inc({ kind: change.kind });
      if (change.kind === 'key_banned') await this.ban(change, Date.now());
      else this.apply(change);
    }
  }

  /** Stores a ban, or keeps it to try again: one failure must not leave a refused key in use. */
  private async ban(ban: KeyBan, seenAt: number): Promise<void> {
    try {
      if (!this.lock.isLeader) throw new Error('this router is not leading');
      await this.storeBan(ban);
      this.unstoredBans.delete(ban.keyId);
    } catch (error) {
      if (Date.now() - seenAt >= BAN_FRESH_FOR_MS) {
        this.unstoredBans.delete(ban.keyId);
        // A standby lets the leader store it; a leader that could not is worth an alert.
        this.logger[this.lock.isLeader ? 'error' : 'debug']({
          message: 'key ban given up: it could not be stored while fresh',
          channelId: ban.channelId,
          keyId: ban.keyId,
          error: (error as Error).message,
        });
        return;
      }
      this.unstoredBans.set(ban.keyId, { ban, seenAt });
      this.scheduleBanRetry();
    }
  }

  private scheduleBanRetry(): void {
    if (this.banRetryTimer) return;
    this.banRetryTimer = setTimeout(() => {
      this.banRetryTimer = undefined;
      void (async () => {
        for (const { ban, seenAt } of [...this.unstoredBans.values()]) await this.ban(ban, seenAt);
      })();
    }, BAN_RETRY_EVERY_MS);
  }

  private apply(change: Exclude<HealthChange, KeyBan>): void {
    if (change.kind === 'breaker_opened') {
      this.logger.warn({ message: 'breaker opened: the channel fails too often', ...change });
    }
    this.schedulePublish();
  }

  private async storeBan(change: KeyBan): Promise<void> {
    // The detail is the upstream's own words, which may quote the key: the edge removed
    // it already, and the router does again before the reason is stored, audited and
    // logged, whatever edge sent it (docs/architecture.md, "Secrets in error text").
    const reason = redactAndCut(
      `banned by the upstream: ${change.detail}`,
      MAX_REASON_CHARS,
      this.secretsOfChannel(change.channelId),
    );
    const disabled = await this.store.autoDisableKey(change.keyId, reason);
    if (!disabled) return;
    this.logger.warn({
      message: 'key disabled automatically: the upstream refused it',
      ...change,
      detail: reason,
    });
    // Stored is done: a failed announcement is caught up by the periodic reload.
    await this.announceChannelChange(change.channelId).catch((error: unknown) =>
      this.logger.warn(`channel change not announced: ${(error as Error).message}`),
    );
  }

  /** Every key of a channel: an upstream may quote any of them. */
  private secretsOfChannel(channelId: number): string[] {
    const channel = this.channels.find((c) => c.id === channelId);
    return (channel?.keys ?? []).flatMap((key) => {
      try {
        const secret = this.cipher.open(key.secretCiphertext);
        // Kept out of this process's log lines too, whoever writes them.
        registerSecret(secret);
        return [secret];
      } catch {
        return [];
      }
    });
  }

  /** A probe found a disabled key or an open channel healthy again. */
  async recovered(kind: 'key' | 'channel', channelId: number, keyId?: number): Promise<void> {
    this.changes.inc({ kind: `${kind}_recovered` });
    if (kind === 'channel') {
      this.health.closeBreaker(channelId);
      this.logger.log({ message: 'breaker closed: the probe succeeded', channelId });
      this.schedulePublish();
      return;
    }
    if (keyId !== undefined && (await this.store.reEnableKey(keyId))) {
      this.health.forgetKey(keyId);
      this.logger.log({ message: 'key re-enabled: the probe succeeded', channelId, keyId });
      await this.announceChannelChange(channelId);
    }
  }

  private async announceChannelChange(channelId: number): Promise<void> {
    await this.reloadChannel(channelId);
    await this.bus
      .publish(Events.ChannelChanged, { channelId, action: 'updated' })
      .catch(() => undefined);
  }

  schedulePublish(): void {
    if (this.publishTimer) return;
    this.publishTimer = setTimeout(() => {
      this.publishTimer = undefined;
      void this.publish().catch((error: unknown) =>
        this.logger.warn(`snapshot not published: ${(error as Error).message}`),
      );
    }, PUBLISH_DEBOUNCE_MS);
  }

  private build(now: number): { channels: RoutedChannel[]; resting: RestingChannel[] } {
    const channels: RoutedChannel[] = [];
    const resting: RestingChannel[] = [];
    for (const channel of this.channels) {
      const rest = () =>
        resting.push({ id: channel.id, models: channel.models, groups: channel.groups });
      if (channel.status !== ChannelStatus.enabled || this.health.isOpen(channel.id)) {
        rest();
        continue;
      }
      const keys = channel.keys
        .filter((key) => key.status === ChannelStatus.enabled)
        .map((key) => ({
          id: key.id,
          secretCiphertext: key.secretCiphertext,
          rpm: key.rpm,
          tpm: key.tpm,
          concurrency: key.concurrency,
          coolingUntil: this.health.coolingUntil(key.id, now),
        }));
      if (keys.length === 0) {
        rest();
        continue;
      }
      const { id, name, kind, provider, settings, baseUrl, models, modelMapping } = channel;
      const { priority, weight, groups, firstByteTimeoutMs } = channel;
      channels.push({
        id,
        name,
        kind,
        provider,
        settings,
        baseUrl,
        models,
        modelMapping,
        priority,
        weight,
        groups,
        keys,
        ...(firstByteTimeoutMs !== null ? { firstByteTimeoutMs } : {}),
      });
    }
    return { channels, resting };
  }

  /**
   * Publishes a new version when the content changed; only the leader publishes. The whole
   * snapshot is stored, and edges are sent only the channels that changed since the version
   * before (docs/architecture.md, "Routing snapshots and changes").
   */
  private async publish(): Promise<void> {
    if (!this.lock.isLeader) return;
    const content = this.build(Date.now());
    const channels = new Map(content.channels.map((c) => [c.id, JSON.stringify(c)]));
    const resting = JSON.stringify(content.resting);
    const base = this.published;
    const changed = base
      ? content.channels.filter((c) => base.channels.get(c.id) !== channels.get(c.id))
      : [];
    const removed = base ? [...base.channels.keys()].filter((id) => !channels.has(id)) : [];
    if (base && changed.length === 0 && removed.length === 0 && resting === base.resting) return;
    const version = await this.redis.incr(VERSION_KEY);
    const generatedAt = Date.now();
    const snapshot: RoutingSnapshot = { version, generatedAt, ...content };
    await this.redis.set(ROUTING_SNAPSHOT_KEY, JSON.stringify(snapshot));
    await this.bus.publish(Events.RoutingChanged, {
      change: {
        version,
        baseVersion: base?.snapshot.version ?? 0,
        generatedAt,
        changed,
        removed,
        resting: content.resting,
      },
    });
    this.published = { snapshot, channels, resting };
    this.logger.log({
      message: 'routing snapshot published',
      version,
      channels: snapshot.channels.length,
      changed: base ? changed.length + removed.length : 'all',
    });
  }

  /** The snapshot edges should use now: ours when leading, else the leader's stored one. */
  async current(): Promise<RoutingSnapshot> {
    if (this.lock.isLeader && this.published) return this.published.snapshot;
    const stored = await this.redis.get(ROUTING_SNAPSHOT_KEY);
    if (stored) return validatePayload(RoutingSnapshot, JSON.parse(stored));
    return { version: 0, generatedAt: Date.now(), ...this.build(Date.now()) };
  }
}
