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
  type RoutingChange,
  type RoutingChangedEvent,
} from '@switchyard/contracts';
import {
  EventBus,
  OnEvent,
  payloadValidator,
  REDIS,
  type RedisClient,
} from '@switchyard/messaging';
import { Counter, Gauge, Registry } from '@switchyard/observability';
import { RoutingTable } from '@switchyard/routing';

const FETCH_RETRY_MS = 1_000;

const validSnapshot = payloadValidator(RoutingSnapshot);

/**
 * The edge's copy of the routing state. The router announces each change as the channels
 * it touched; the edge applies it to the version it holds, or, when it does not hold the
 * version the change follows, reads the router's stored snapshot whole (docs/architecture.md,
 * "Routing snapshots and changes"). It keeps the highest version it has seen and goes on
 * serving from it when the router is gone.
 */
@Injectable()
export class RoutingState implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RoutingState');
  private current: RoutingTable | null = null;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly version: Gauge;
  private readonly wholeReads: Counter;
  /** A read of the stored snapshot in flight, and whether a change arrived meanwhile. */
  private reading: Promise<void> | null = null;
  private readAgain = false;

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
    this.wholeReads = new Counter({
      name: 'edge_routing_snapshot_reads_total',
      help: 'Stored routing snapshots read whole because a change did not follow the version held.',
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

  /** Applies a change to the version held; anything else is caught up from the stored snapshot. */
  apply(change: RoutingChange): void {
    const held = this.current;
    if (held && change.version <= held.version) return;
    // Base 0 follows nothing published, even when the edge holds a version 0: what a router
    // not leading yet answers at start-up, built from its own state, is no base to apply to.
    if (!held || change.baseVersion === 0 || change.baseVersion !== held.version) {
      this.readStored();
      return;
    }
    const channels = new Map(held.snapshot.channels.map((channel) => [channel.id, channel]));
    for (const id of change.removed) channels.delete(id);
    for (const channel of change.changed) channels.set(channel.id, channel);
    this.install({
      version: change.version,
      generatedAt: change.generatedAt,
      // The router's order, so every edge and the stored snapshot list channels alike.
      channels: [...channels.values()].sort((a, b) => a.id - b.id),
      resting: change.resting,
    });
  }

  /**
   * One read at a time; a change arriving during it may be newer than what the read finds
   * (the router stores a version before announcing it), so it reads once more after.
   */
  private readStored(): void {
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.wholeReads.inc();
    this.reading = this.redis
      .get(ROUTING_SNAPSHOT_KEY)
      .then((stored) => {
        if (stored) this.install(validSnapshot(JSON.parse(stored)));
      })
      .catch((error: unknown) => {
        this.logger.warn(`routing snapshot not read: ${(error as Error).message}`);
        // Redis away: the change would be lost until the next one, so it is read again.
        if (!this.stopped) {
          clearTimeout(this.retry);
          this.retry = setTimeout(() => this.readStored(), FETCH_RETRY_MS);
        }
      })
      .finally(() => {
        this.reading = null;
        if (this.readAgain) {
          this.readAgain = false;
          this.readStored();
        }
      });
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
        if (stored) this.install(validSnapshot(JSON.parse(stored)));
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

  @OnEvent(Events.RoutingChanged)
  changed(event: RoutingChangedEvent): void {
    this.state.apply(event.change);
  }
}
