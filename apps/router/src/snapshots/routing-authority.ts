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
import { Counter, Registry, redactAndCut, registerSecret } from '@switchyard/observability';
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

@Injectable()
export class RoutingAuthority implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RoutingAuthority');
  private channels: StoredChannel[] = [];
  private published: RoutingSnapshot | null = null;
  private publishedContent = '';
  private publishTimer: NodeJS.Timeout | undefined;
  private reloadTimer: NodeJS.Timeout | undefined;
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
  }

  async onApplicationBootstrap(): Promise<void> {
    this.lock.onChange((leading) => {
      if (leading) this.schedulePublish();
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
  }

  get routable(): readonly StoredChannel[] {
    return this.channels;
  }

  async reload(): Promise<void> {
    this.channels = await this.store.loadRoutable();
    this.schedulePublish();
  }

  async handleOutcomes(outcomes: ChannelOutcome[]): Promise<void> {
    for (const outcome of outcomes) {
      const change = this.health.record(outcome);
      if (change) await this.apply(change);
    }
  }

  private async apply(change: HealthChange): Promise<void> {
    this.changes.inc({ kind: change.kind });
    if (change.kind === 'key_banned') {
      if (!this.lock.isLeader) return;
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
      await this.announceChannelChange(change.channelId);
      return;
    }
    if (change.kind === 'breaker_opened') {
      this.logger.warn({ message: 'breaker opened: the channel fails too often', ...change });
    }
    this.schedulePublish();
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
    await this.reload();
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

  private build(now: number): Omit<RoutingSnapshot, 'version' | 'generatedAt'> {
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

  /** Publishes a new version when the content changed; only the leader publishes. */
  private async publish(): Promise<void> {
    if (!this.lock.isLeader) return;
    const content = this.build(Date.now());
    const serialized = JSON.stringify(content);
    if (serialized === this.publishedContent && this.published) return;
    const version = await this.redis.incr(VERSION_KEY);
    const snapshot: RoutingSnapshot = { version, generatedAt: Date.now(), ...content };
    await this.redis.set(ROUTING_SNAPSHOT_KEY, JSON.stringify(snapshot));
    await this.bus.publish(Events.RoutingSnapshot, { snapshot });
    this.published = snapshot;
    this.publishedContent = serialized;
    this.logger.log({
      message: 'routing snapshot published',
      version,
      channels: snapshot.channels.length,
    });
  }

  /** The snapshot edges should use now: ours when leading, else the leader's stored one. */
  async current(): Promise<RoutingSnapshot> {
    if (this.lock.isLeader && this.published) return this.published;
    const stored = await this.redis.get(ROUTING_SNAPSHOT_KEY);
    if (stored) return validatePayload(RoutingSnapshot, JSON.parse(stored));
    return { version: 0, generatedAt: Date.now(), ...this.build(Date.now()) };
  }
}
