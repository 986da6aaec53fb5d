import {
  Controller,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import {
  Events,
  Messages,
  ROUTING_SNAPSHOT_KEY,
  RoutingSnapshot,
  type RoutingSnapshotEvent,
} from '@switchyard/contracts';
import { EventBus, OnEvent, REDIS, validatePayload, type RedisClient } from '@switchyard/messaging';
import { Gauge, Registry } from '@switchyard/observability';
import { RoutingTable } from '@switchyard/routing';

const FETCH_RETRY_MS = 1_000;

/**
 * The edge's copy of the routing state. The router publishes a snapshot on every change;
 * the edge keeps the highest version it has seen and goes on serving from it when the
 * router is gone.
 */
@Injectable()
export class RoutingState implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RoutingState');
  private current: RoutingTable | null = null;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly version: Gauge;

  constructor(
    private readonly bus: EventBus,
    @Inject(REDIS) private readonly redis: RedisClient,
    registry: Registry,
  ) {
    this.version = new Gauge({
      name: 'edge_routing_snapshot_version',
      help: 'Version of the routing snapshot in use.',
      registers: [registry],
    });
  }

  get table(): RoutingTable | null {
    return this.current;
  }

  install(snapshot: RoutingSnapshot): boolean {
    if (this.current && snapshot.version <= this.current.version) return false;
    this.current = new RoutingTable(snapshot);
    this.version.set(snapshot.version);
    this.logger.log({
      message: 'routing snapshot installed',
      version: snapshot.version,
      channels: snapshot.channels.length,
    });
    return true;
  }

  onApplicationBootstrap(): void {
    void this.fetch();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.retry);
  }

  /** Asks the router for its snapshot; falls back to the stored one; retries until it has one. */
  private async fetch(): Promise<void> {
    try {
      this.install(await this.bus.request(Messages.GetRoutingSnapshot, {}, 2_000));
    } catch {
      try {
        const stored = await this.redis.get(ROUTING_SNAPSHOT_KEY);
        if (stored) this.install(validatePayload(RoutingSnapshot, JSON.parse(stored)));
      } catch (error) {
        this.logger.warn(`no routing snapshot yet: ${(error as Error).message}`);
      }
    }
    if (!this.current && !this.stopped) {
      this.retry = setTimeout(() => void this.fetch(), FETCH_RETRY_MS);
    }
  }
}

@Controller()
export class RoutingSnapshotController {
  constructor(private readonly state: RoutingState) {}

  @OnEvent(Events.RoutingSnapshot)
  received(event: RoutingSnapshotEvent): void {
    this.state.install(event.snapshot);
  }
}
