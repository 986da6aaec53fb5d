import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { type EdgeEnv } from '@switchyard/config';
import { SqlDatabaseModule, SqlReadiness } from '@switchyard/db/sql';
import { MessagingModule, RedisReadiness, busConnectionOf } from '@switchyard/messaging';
import { HealthModule, MetricsModule } from '@switchyard/observability';
import { BudgetsModule } from './budgets/budgets.module.js';
import { AdminProxyModule } from './admin-proxy/admin-proxy.module.js';
import { BillingModule } from './billing/billing.module.js';
import { OpenAIExceptionFilter } from './errors/openai-exception.filter.js';
import { PricingModule } from './pricing/pricing.module.js';
import { ProxyModule } from './proxy/proxy.module.js';
import { RequestLogModule } from './request-log/request-log.module.js';
import { RoutingModule } from './routing/routing.module.js';
import { UpstreamModule } from './upstream/upstream.module.js';
import { UsageModule } from './usage/usage.module.js';

@Module({})
export class EdgeModule {
  static forRoot(env: EdgeEnv): DynamicModule {
    // One instance, imported by the proxy and by pricing (the names channels map models to).
    const routing = RoutingModule.forRoot(env.SECRET_KEYS);
    return {
      module: EdgeModule,
      imports: [
        SqlDatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE }),
        MessagingModule.forRoot(busConnectionOf(env)),
        MetricsModule.forService('edge'),
        BudgetsModule.forRoot({ timeZone: env.BUDGET_TIME_ZONE, clockFile: env.TEST_CLOCK_FILE }),
        HealthModule.register([SqlReadiness, RedisReadiness]),
        ProxyModule.forRoot(
          {
            failover: {
              maxAttempts: env.FAILOVER_ATTEMPTS,
              timeBudgetMs: env.FAILOVER_TIME_BUDGET_MS,
              firstByteMs: env.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
            },
            frontDoor: { bodyLimit: env.MAX_BODY_BYTES, trustedProxies: env.TRUSTED_PROXIES },
          },
          [
            routing,
            UpstreamModule.forRoot({
              firstByteMs: env.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
              idleMs: env.UPSTREAM_IDLE_TIMEOUT_MS,
            }),
            UsageModule.forRoot(env.USAGE_SPOOL_DIR),
            RequestLogModule.forRoot({
              maxBytes: env.REQUEST_LOG_MAX_BYTES,
              redactPatterns: env.REQUEST_LOG_REDACT_PATTERNS,
            }),
            PricingModule.forRoot(env.UNPRICED_MODELS, routing),
          ],
        ),
        BillingModule.forRoot(env.BUDGET_TIME_ZONE),
        AdminProxyModule.forRoot(env.ADMIN_URL),
      ],
      providers: [{ provide: APP_FILTER, useClass: OpenAIExceptionFilter }],
    };
  }
}
