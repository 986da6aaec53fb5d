import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { type WebEnv } from '@switchyard/config';
import {
  API_BODY_LIMITS,
  ApiError,
  IMAGE_LIMITS,
  imageTooLargeMessage,
} from '@switchyard/contracts';
import { HealthModule, MetricsModule } from '@switchyard/observability';
import { ApiExceptionFilter } from '@switchyard/service';
import { ChatProxy } from './proxy/chat-proxy.js';

@Module({})
export class WebModule {
  static forRoot(env: WebEnv): DynamicModule {
    return {
      module: WebModule,
      // Readiness does not depend on the chat backend: when it is down, web keeps serving
      // the app and answers /api with the 502 that tells people what to check
      // (docs/specification.md, "Errors").
      imports: [MetricsModule.forService('web'), HealthModule.register([])],
      providers: [
        {
          provide: ChatProxy,
          useFactory: () =>
            new ChatProxy({
              chatUrl: env.CHAT_URL,
              headersTimeoutMs: env.CHAT_HEADERS_TIMEOUT_MS,
              idleTimeoutMs: env.CHAT_IDLE_TIMEOUT_MS,
              bodyLimit: API_BODY_LIMITS.chat,
              // An image is uploaded alone, as the body (docs/specification.md, "Images").
              pathBodyLimits: {
                '/api/attachments': {
                  bytes: IMAGE_LIMITS.bytesPerImage,
                  error: () => new ApiError('image_too_large', imageTooLargeMessage()),
                },
              },
            }),
        },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    };
  }
}
