import { Module, type DynamicModule } from '@nestjs/common';
import { type RouterEnv } from '@switchyard/config';
import { DatabaseModule, DatabaseReadiness } from '@switchyard/db';
import { GatewayStoreModule } from '@switchyard/gateway-store';
import { MessagingModule, RedisReadiness, busConnectionOf } from '@switchyard/messaging';
import { HealthModule, MetricsModule } from '@switchyard/observability';
import { SecretCipher } from '@switchyard/security';
import { HealthBook } from './health/health-book.js';
import { LeaderLock } from './leadership/leader-lock.js';
import { PROBE_INTERVAL, Prober } from './probes/prober.js';
import { RoutingAuthority } from './snapshots/routing-authority.js';
import { RoutingController } from './snapshots/routing.controller.js';

@Module({})
export class RouterModule {
  static forRoot(env: RouterEnv): DynamicModule {
    return {
      module: RouterModule,
      imports: [
        DatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE }),
        GatewayStoreModule,
        MessagingModule.forRoot(busConnectionOf(env)),
        MetricsModule.forService('router'),
        HealthModule.register([DatabaseReadiness, RedisReadiness]),
      ],
      controllers: [RoutingController],
      providers: [
        HealthBook,
        LeaderLock,
        RoutingAuthority,
        Prober,
        { provide: PROBE_INTERVAL, useValue: env.PROBE_INTERVAL_MS },
        { provide: SecretCipher, useFactory: () => new SecretCipher(env.SECRET_KEYS) },
      ],
    };
  }
}
