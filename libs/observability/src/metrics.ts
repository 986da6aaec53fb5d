import { Module, type DynamicModule, type OnModuleDestroy } from '@nestjs/common';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { TalliedCounter, TalliedHistogram } from './tally.js';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

export const METRICS_OPTIONS = Symbol('METRICS_OPTIONS');

interface MetricsOptions {
  service: string;
}

/** Per-request HTTP metrics, recorded by the service bootstrap for every route. */
export class HttpMetrics {
  readonly requests: TalliedCounter<'method' | 'route' | 'status'>;
  readonly duration: TalliedHistogram<'method' | 'route'>;

  constructor(registry: Registry) {
    this.requests = new TalliedCounter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by route and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    });
    this.duration = new TalliedHistogram({
      name: 'http_request_duration_seconds',
      help: 'Time from request to the end of the response.',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
      registers: [registry],
    });
  }

  record(method: string, route: string, status: number, seconds: number): void {
    this.requests.tally({ method, route, status }).inc();
    this.duration.tally({ method, route }).observe(seconds);
  }
}

/** The content type of the Prometheus text format `/metrics` answers in. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * A service's registry: its own metrics and prom-client's defaults, among them the event
 * loop's delay (`nodejs_eventloop_lag_max_seconds` and its percentiles, measured since the
 * last scrape).
 */
export function serviceRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** How often the main thread's CPU time is read. */
const BUSY_TICK_MS = 10;

/**
 * `eventloop_busy_max_seconds`: the most CPU time the main thread spent between two ticks
 * of a 10 ms timer since the last scrape, so at least the longest turn the event loop took
 * while every other request waited. Unlike the delay, it leaves out the time a busy machine
 * kept the process off its cores, so it tells a stall of the service's own making apart
 * (docs/reliability.md, "Counting tokens in bounded time").
 */
export class EventLoopBusy implements OnModuleDestroy {
  private last = process.threadCpuUsage();
  private longest = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(registry: Registry) {
    this.timer = setInterval(() => {
      const used = process.threadCpuUsage(this.last);
      this.last = process.threadCpuUsage();
      this.longest = Math.max(this.longest, (used.user + used.system) / 1e6);
    }, BUSY_TICK_MS);
    this.timer.unref();
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const busy = this;
    new Gauge({
      name: 'eventloop_busy_max_seconds',
      help: 'Most CPU time the main thread ran between two 10 ms timer ticks since the last scrape.',
      registers: [registry],
      collect() {
        this.set(busy.longest);
        busy.longest = 0;
      },
    });
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }
}

/**
 * One Prometheus registry per service. The service bootstrap serves it at `/metrics`, on
 * the service's operations port only (docs/architecture.md, "Operations ports").
 */
@Module({})
export class MetricsModule {
  static forService(service: string): DynamicModule {
    return {
      module: MetricsModule,
      global: true,
      providers: [
        { provide: METRICS_OPTIONS, useValue: { service } satisfies MetricsOptions },
        {
          provide: Registry,
          useFactory: () => serviceRegistry(service),
        },
        {
          provide: EventLoopBusy,
          useFactory: (registry: Registry) => new EventLoopBusy(registry),
          inject: [Registry],
        },
        {
          provide: HttpMetrics,
          useFactory: (registry: Registry) => new HttpMetrics(registry),
          inject: [Registry],
        },
      ],
      exports: [Registry, HttpMetrics],
    };
  }
}

/**
 * Bounds a read a scrape waits for (a gauge filled from Postgres or Redis when collected):
 * past `ms` it rejects, and the gauge answers with the last values it read.
 */
export function readWithin<T>(work: Promise<T>, ms: number, source: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from ${source} within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
