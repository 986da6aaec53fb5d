import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { outcomeOfStatus } from '@switchyard/contracts';
import { ChannelStatus } from '@switchyard/db';
import { ChannelClient, chatPing, readAtMost, type ChannelCall } from '@switchyard/providers';
import { type StoredChannel, type StoredKey } from '@switchyard/gateway-store';
import { isWildcard } from '@switchyard/domain';
import { SecretCipher } from '@switchyard/security';
import { HealthBook } from '../health/health-book.js';
import { LeaderLock } from '../leadership/leader-lock.js';
import { RoutingAuthority } from '../snapshots/routing-authority.js';

// The leader's periodic check of what was taken out automatically: keys disabled after a
// ban, and channels whose breaker is open. One small real request each; what answers well
// goes back into rotation. What an administrator disabled is never probed.

export const PROBE_INTERVAL = Symbol('PROBE_INTERVAL');
const PROBE_TIMEOUT_MS = 10_000;
/** Enough of an answer for a provider's error in its body (ChatAdapter.healthStatus). */
const MAX_ANSWER_BYTES = 64 * 1024;

type ProbeResult = 'healthy' | 'banned' | 'failing';

@Injectable()
export class Prober implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Prober');
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly client = new ChannelClient({
    firstByteMs: PROBE_TIMEOUT_MS,
    idleMs: PROBE_TIMEOUT_MS,
    userAgent: 'switchyard-router/probe',
  });

  constructor(
    @Inject(PROBE_INTERVAL) private readonly intervalMs: number,
    private readonly authority: RoutingAuthority,
    private readonly health: HealthBook,
    private readonly lock: LeaderLock,
    private readonly cipher: SecretCipher,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.round(), this.intervalMs);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.client.close();
  }

  async round(): Promise<void> {
    if (!this.lock.isLeader || this.running) return;
    this.running = true;
    try {
      const channels = this.authority.routable;
      for (const channel of channels) {
        if (channel.status === ChannelStatus.disabled) continue;
        for (const key of channel.keys.filter((k) => k.status === ChannelStatus.auto_disabled)) {
          if ((await this.probe(channel, key)) !== 'banned')
            await this.authority.recovered('key', channel.id, key.id);
        }
      }
      for (const channelId of this.health.openBreakers(Date.now(), this.intervalMs / 2)) {
        const channel = channels.find((c) => c.id === channelId);
        const key = channel?.keys.find((k) => k.status === ChannelStatus.enabled);
        if (!channel || !key) continue;
        if ((await this.probe(channel, key)) === 'healthy')
          await this.authority.recovered('channel', channelId);
      }
    } catch (error) {
      this.logger.warn(`probe round failed: ${(error as Error).message}`);
    } finally {
      this.running = false;
    }
  }

  /**
   * The one-token chat request the admin's channel test sends too (libs/providers'
   * `chatPing`), in the channel's provider's format; an openai channel that names only
   * wildcard models is asked for its model list instead.
   */
  private async probe(channel: StoredChannel, key: StoredKey): Promise<ProbeResult> {
    const model = channel.models.find((m) => !isWildcard(m));
    const name = model ?? '';
    try {
      const secret = this.cipher.open(key.secretCiphertext);
      const ping = chatPing(
        {
          provider: channel.provider,
          baseUrl: channel.baseUrl,
          secret,
          settings: channel.settings,
          upstreamModel: channel.modelMapping[name] ?? name,
        },
        name,
        1,
      );
      const call: ChannelCall =
        model === undefined && channel.provider === 'openai'
          ? { baseUrl: channel.baseUrl, path: '/models', method: 'GET', secret }
          : ping.call;
      const response = await this.client.send(call);
      const answer = await readAtMost(response.body, MAX_ANSWER_BYTES);
      const kind = outcomeOfStatus(ping.healthStatus(response.statusCode, answer));
      if (kind === 'banned') return 'banned';
      return kind === 'server_error' ? 'failing' : 'healthy';
    } catch {
      return 'failing';
    }
  }
}
