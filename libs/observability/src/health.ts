import {
  Controller,
  Get,
  HttpStatus,
  Inject,
  Injectable,
  Module,
  Res,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type Type,
} from '@nestjs/common';

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

  constructor(@Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[]) {}

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
    const checks = Object.fromEntries(results);
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
        HealthService,
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
