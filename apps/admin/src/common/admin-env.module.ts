import { Global, Module, type DynamicModule } from '@nestjs/common';
import { AdminEnv } from '@switchyard/config';

/** The validated environment, injectable by its class everywhere in the app. */
@Global()
@Module({})
export class AdminEnvModule {
  static forRoot(env: AdminEnv): DynamicModule {
    return {
      module: AdminEnvModule,
      providers: [{ provide: AdminEnv, useValue: env }],
      exports: [AdminEnv],
    };
  }
}
