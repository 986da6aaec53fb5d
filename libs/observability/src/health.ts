import {
  Controller,
  Get,
  HttpStatus,
  Injectable,
  Module,
  Res,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type Type,
} from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';

/** A dependency the service cannot work without; `check` rejects when it is unreachable. */
export interface ReadinessCheck {
  readonly name: string;
  check(): Promise<void>;
}

const READINESS_CHECKS = Symbol('READINESS_CHECKS');
const CHECK_TIMEOUT_MS = 2_000;

export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  checks: Record<string, { status: 'ok' | 'unavailable'; error?: string }>;
}

@Injectable()
export class HealthService implements BeforeApplicationShutdown {
  private shuttingDown = false;

  constructor(
    private readonly checks: ReadinessCheck[],
    registry?: Registry,
  ) {
    if (registry) this.exportDependencies(registry);
  }

  /**
   * `dependency_up{dependency}`: 1 while a dependency answers its readiness check, read at
   * each scrape, so an alert can name what a service cannot reach (docs/operations.md,
   * "Alerts").
   */
  private exportDependencies(registry: Registry): void {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const health = this;
    new Gauge({
      name: 'dependency_up',
      help: '1 while the service reaches the dependency (Postgres, Redis), 0 while it does not.',
      labelNames: ['dependency'],
      registers: [registry],
      async collect() {
        const report = await health.readiness();
        for (const [dependency, result] of Object.entries(report.checks))
          this.set({ dependency }, result.status === 'ok' ? 1 : 0);
      },
    });
  }

  beforeApplicationShutdown(): void {
    // Stop receiving new traffic before the server drains what it has.
    this.shuttingDown = true;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  async readiness(): Promise<ReadinessReport> {
    const results = await Promise.all(
      this.checks.map(async (dependency) => {
        try {
          await withTimeout(dependency.check(), CHECK_TIMEOUT_MS);
          return [dependency.name, { status: 'ok' as const }] as const;
        } catch (error) {
          // Driver messages can span lines; the last one says what happened.
          const message =
            (error instanceof Error ? error.message : String(error)).trim().split('\n').at(-1) ??
            '';
          return [dependency.name, { status: 'unavailable' as const, error: message }] as const;
        }
      }),
    );
    const checks = Object.fromEntries<ReadinessReport['checks'][string]>(results);
    const ready = !this.shuttingDown && results.every(([, result]) => result.status === 'ok');
    return { status: ready ? 'ok' : 'unavailable', checks };
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

interface StatusReply {
  status(code: number): { send(body: unknown): unknown };
}

@Controller()
class HealthController {
  constructor(private readonly health: HealthService) {}

  /** Alive: the process answers. Never depends on other services. */
  @Get('healthz')
  liveness(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Ready: every dependency answers and the service is not shutting down. */
  @Get('readyz')
  async readiness(@Res() reply: StatusReply): Promise<void> {
    const report = await this.health.readiness();
    reply
      .status(report.status === 'ok' ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE)
      .send(report);
  }
}

/** `/healthz` and `/readyz`; the checks are providers exported by global infrastructure modules. */
@Module({})
export class HealthModule {
  static register(checks: Type<ReadinessCheck>[]): DynamicModule {
    return {
      module: HealthModule,
      controllers: [HealthController],
      providers: [
        {
          provide: HealthService,
          useFactory: (instances: ReadinessCheck[], registry?: Registry) =>
            new HealthService(instances, registry),
          inject: [READINESS_CHECKS, { token: Registry, optional: true }],
        },
        {
          provide: READINESS_CHECKS,
          useFactory: (...instances: ReadinessCheck[]) => instances,
          inject: checks,
        },
      ],
      exports: [HealthService],
    };
  }
}
