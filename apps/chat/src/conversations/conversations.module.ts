import { Module } from '@nestjs/common';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { RecordRotation } from '../api-keys/record-rotation.js';
import { A2aAgentsModule } from '../a2a-agents/a2a-agents.module.js';
import { CreditsModule } from '../credits/credits.module.js';
import { McpModule } from '../mcp/mcp.module.js';
import { AttachmentsModule } from '../attachments/attachments.module.js';
import { ModelsModule } from '../models/models.module.js';
import { ToolLoopService } from '../tools/tool-loop.service.js';
import { UpstreamClient } from '../upstream/upstream-client.js';
import { ConversationsController } from './conversations.controller.js';
import { ConversationsRepository } from './conversations.repository.js';
import { ConversationsService } from './conversations.service.js';
import { MessagesService } from './messages.service.js';

@Module({
  imports: [
    ModelsModule,
    AttachmentsModule,
    ApiKeysModule,
    McpModule,
    A2aAgentsModule,
    CreditsModule,
  ],
  exports: [MessagesService, RecordRotation],
  controllers: [ConversationsController],
  providers: [
    ConversationsRepository,
    ConversationsService,
    MessagesService,
    RecordRotation,
    ToolLoopService,
    UpstreamClient,
  ],
})
export class ConversationsModule {}
