import { Module } from '@nestjs/common';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { CreditsModule } from '../credits/credits.module.js';
import { McpModule } from '../mcp/mcp.module.js';
import { ModelsModule } from '../models/models.module.js';
import { ChatSettingsModule } from '../settings/chat-settings.module.js';
import { A2aKeysController } from './a2a-keys.controller.js';
import { A2aKeysRepository } from './a2a-keys.repository.js';
import { A2aKeysService } from './a2a-keys.service.js';
import { A2aController } from './a2a.controller.js';
import { A2aEndpointService } from './a2a-endpoint.service.js';
import { ChatAgentExecutor } from './chat-agent.executor.js';
import { PrismaTaskStore } from './task-store.js';

/** This app as an A2A agent: its card, its JSON-RPC endpoint, the keys that open it. */
@Module({
  imports: [ConversationsModule, ModelsModule, McpModule, CreditsModule, ChatSettingsModule],
  controllers: [A2aController, A2aKeysController],
  providers: [
    A2aKeysRepository,
    A2aKeysService,
    A2aEndpointService,
    ChatAgentExecutor,
    PrismaTaskStore,
  ],
})
export class A2aModule {}
