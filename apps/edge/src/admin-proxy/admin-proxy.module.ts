import { Module, type DynamicModule } from '@nestjs/common';
import { Pool } from 'undici';
import { AdminProxyController } from './admin-proxy.controller.js';

@Module({})
export class AdminProxyModule {
  static forRoot(adminUrl: string): DynamicModule {
    return {
      module: AdminProxyModule,
      controllers: [AdminProxyController],
      providers: [
        { provide: Pool, useFactory: () => new Pool(adminUrl, { keepAliveTimeout: 30_000 }) },
      ],
    };
  }
}
