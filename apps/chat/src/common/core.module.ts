import { Global, Module, type DynamicModule } from '@nestjs/common';
import { ChatEnv } from '@switchyard/config';
import { SecretCipher } from '@switchyard/security';

/** The validated environment and the helpers every feature may use. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(env: ChatEnv): DynamicModule {
    return {
      module: CoreModule,
      providers: [
        { provide: ChatEnv, useValue: env },
        { provide: SecretCipher, useFactory: () => new SecretCipher(env.SECRET_KEYS) },
      ],
      exports: [ChatEnv, SecretCipher],
    };
  }
}
