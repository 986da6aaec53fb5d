import { Module, type DynamicModule } from '@nestjs/common';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

export const METRICS_OPTIONS = Symbol('METRICS_OPTIONS');

interface MetricsOptions {
  service: string;
}

/** Per-request HTTP metrics, recorded by the service bootstrap for every route. */
export class HttpMetrics {
  readonly requests: Counter<'method' | 'route' | 'status'>;
  readonly duration: Histogram<'method' | 'route'>;

  constructor(registry: Registry) {
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by route and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from request to the end of the response.',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
      registers: [registry],
    });
  }

  record(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.duration.observe({ method, route }, seconds);
  }
}

/** The content type of the Prometheus text format `/metrics` answers in. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

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
          useFactory: () => {
            const registry = new Registry();
            registry.setDefaultLabels({ service });
            collectDefaultMetrics({ register: registry });
            return registry;
          },
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
