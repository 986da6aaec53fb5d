import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { outcomeOfStatus } from '@switchyard/contracts';
import { ChannelStatus } from '@switchyard/db';
import { chatAdapterFor, outboundHeaders, type ChatAdapter } from '@switchyard/providers';
import { type StoredChannel, type StoredKey } from '@switchyard/gateway-store';
import { isWildcard } from '@switchyard/domain';
import { upstreamTarget } from '@switchyard/routing';
import { SecretCipher } from '@switchyard/security';
import { Agent } from 'undici';
import { HealthBook } from '../health/health-book.js';
import { LeaderLock } from '../leadership/leader-lock.js';
import { RoutingAuthority } from '../snapshots/routing-authority.js';

// The leader's periodic check of what was taken out automatically: keys disabled after a
// ban, and channels whose breaker is open. One small real request each; what answers well
// goes back into rotation. What an administrator disabled is never probed.

export const PROBE_INTERVAL = Symbol('PROBE_INTERVAL');
const PROBE_TIMEOUT_MS = 10_000;

type ProbeResult = 'healthy' | 'banned' | 'failing';

@Injectable()
export class Prober implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Prober');
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly agent = new Agent({
    headersTimeout: PROBE_TIMEOUT_MS,
    bodyTimeout: PROBE_TIMEOUT_MS,
    connect: { timeout: PROBE_TIMEOUT_MS },
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
    await this.agent.close();
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

  private async probe(channel: StoredChannel, key: StoredKey): Promise<ProbeResult> {
    const model = channel.models.find((m) => !isWildcard(m));
    let adapter: ChatAdapter | null;
    try {
      adapter = chatAdapterFor(channel.provider);
    } catch {
      return 'failing';
    }
    if (adapter) return this.probeConverted(adapter, channel, key, model ?? '');
    const target = upstreamTarget(channel.baseUrl, model ? '/chat/completions' : '/models');
    try {
      const response = await this.agent.request({
        origin: target.origin,
        path: target.path,
        method: model ? 'POST' : 'GET',
        headers: {
          authorization: `Bearer ${this.cipher.open(key.secretCiphertext)}`,
          'content-type': 'application/json',
        },
        body: model
          ? JSON.stringify({
              model: channel.modelMapping[model] ?? model,
              messages: [{ role: 'user', content: 'ping' }],
              max_tokens: 1,
            })
          : undefined,
      });
      await response.body.dump();
      const kind = outcomeOfStatus(response.statusCode);
      if (kind === 'banned') return 'banned';
      return kind === 'server_error' ? 'failing' : 'healthy';
    } catch {
      return 'failing';
    }
  }

  /** A channel of another provider than openai: the same one-token request, in its format. */
  private async probeConverted(
    adapter: ChatAdapter,
    channel: StoredChannel,
    key: StoredKey,
    model: string,
  ): Promise<ProbeResult> {
    try {
      const upstreamModel = channel.modelMapping[model] ?? model;
      const outbound = adapter.chatRequest(
        {
          body: { model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 },
          upstreamModel,
          secret: this.cipher.open(key.secretCiphertext),
          settings: channel.settings,
        },
        false,
      );
      const base = new URL(channel.baseUrl);
      const path = `${base.pathname.replace(/\/+$/, '')}${outbound.path}`;
      const headers = await outboundHeaders(outbound, new URL(path, base.origin));
      const response = await this.agent.request({
        origin: base.origin,
        path,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: outbound.body,
      });
      const body = Buffer.from(await response.body.arrayBuffer());
      const kind = outcomeOfStatus(adapter.healthStatus(response.statusCode, body));
      if (kind === 'banned') return 'banned';
      return kind === 'server_error' ? 'failing' : 'healthy';
    } catch {
      return 'failing';
    }
  }
}
