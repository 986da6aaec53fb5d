import { Module } from '@nestjs/common';
import { AdminEnv } from '@switchyard/config';
import { GatewayStoreModule } from '@switchyard/gateway-store';
import { SecretCipher } from '@switchyard/security';
import { AuditModule } from '../audit/audit.module.js';
import { EventsModule } from '../events/events.module.js';
import { ChannelTester } from './channel-tester.js';
import { ChannelsController } from './channels.controller.js';
import { ChannelsService } from './channels.service.js';

@Module({
  imports: [AuditModule, EventsModule, GatewayStoreModule],
  controllers: [ChannelsController],
  providers: [
    ChannelsService,
    ChannelTester,
    {
      provide: SecretCipher,
      useFactory: (env: AdminEnv) => new SecretCipher(env.SECRET_KEYS),
      inject: [AdminEnv],
    },
  ],
  exports: [ChannelsService],
})
export class ChannelsModule {}
