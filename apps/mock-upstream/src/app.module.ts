import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { type MockUpstreamEnv } from '@switchyard/config';
import { HealthModule, MetricsModule } from '@switchyard/observability';
import { apiValidationPipe } from '@switchyard/service';
import { MessagesController } from './anthropic/messages.controller.js';
import { AudioController } from './audio/audio.controller.js';
import { UploadForms } from './audio/upload-form.js';
import { AccountPool, parseAccountSpec } from './accounts/account-pool.js';
import { DeploymentsController } from './azure/deployments.controller.js';
import { ConverseController } from './bedrock/converse.controller.js';
import { RequestLog } from './accounts/request-log.js';
import { ControlController } from './control/control.controller.js';
import { FaultPlan } from './faults/fault-plan.js';
import { GenerateContentController } from './gemini/generate-content.controller.js';
import { MediaController } from './media/media.controller.js';
import { INITIAL_ACCOUNTS } from './mock-upstream.options.js';
import { ChatController } from './openai/chat.controller.js';
import { EmbeddingsController } from './openai/embeddings.controller.js';
import { ExchangeService } from './openai/exchange.js';
import { ImagesController } from './openai/images.controller.js';
import { ModelsController } from './openai/models.controller.js';
import { ResponseStore } from './openai/response-store.js';
import { ResponsesController } from './openai/responses.controller.js';
import { ModerationsController } from './openai/moderations.controller.js';
import { ProviderErrorFilter } from './openai/provider-error.filter.js';
import { TextCompletionsController } from './openai/text-completions.controller.js';
import { RerankController } from './rerank/rerank.controller.js';

@Module({})
export class MockUpstreamModule {
  static forRoot(env: MockUpstreamEnv): DynamicModule {
    const accounts = env.MOCK_ACCOUNTS.map(parseAccountSpec);
    return {
      module: MockUpstreamModule,
      imports: [MetricsModule.forService('mock-upstream'), HealthModule.register([])],
      controllers: [
        ChatController,
        TextCompletionsController,
        ResponsesController,
        ModerationsController,
        RerankController,
        AudioController,
        EmbeddingsController,
        ImagesController,
        MediaController,
        ModelsController,
        MessagesController,
        DeploymentsController,
        GenerateContentController,
        ConverseController,
        ControlController,
      ],
      providers: [
        { provide: INITIAL_ACCOUNTS, useValue: accounts },
        { provide: AccountPool, useFactory: () => new AccountPool(accounts) },
        {
          provide: FaultPlan,
          useFactory: () =>
            new FaultPlan({
              latencyMs: env.MOCK_LATENCY_MS,
              chunkDelayMs: env.MOCK_CHUNK_DELAY_MS,
              errorRate: env.MOCK_ERROR_RATE,
            }),
        },
        ExchangeService,
        ResponseStore,
        RequestLog,
        UploadForms,
        { provide: APP_PIPE, useFactory: apiValidationPipe },
        { provide: APP_FILTER, useClass: ProviderErrorFilter },
      ],
    };
  }
}
