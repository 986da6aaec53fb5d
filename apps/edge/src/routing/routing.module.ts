import { Module, type DynamicModule } from '@nestjs/common';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { AccountLimiter } from '@switchyard/routing';
import { SecretCipher } from '@switchyard/security';
import { KeyVault } from './key-vault.js';
import { RoutingSnapshotController, RoutingState } from './routing-state.js';

@Module({})
export class RoutingModule {
  static forRoot(secretKeys: string[]): DynamicModule {
    return {
      module: RoutingModule,
      controllers: [RoutingSnapshotController],
      providers: [
        RoutingState,
        { provide: SecretCipher, useFactory: () => new SecretCipher(secretKeys) },
        KeyVault,
        {
          provide: AccountLimiter,
          useFactory: (redis: RedisClient) => new AccountLimiter(redis),
          inject: [REDIS],
        },
      ],
      exports: [RoutingState, KeyVault, AccountLimiter],
    };
  }
}
