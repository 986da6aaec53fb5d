import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { ChatCompletionRequest } from '@switchyard/contracts';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import {
  answer,
  approximateTokens,
  completionBody,
  completionChunks,
  completionId,
  completionTokens,
  invalidFormat,
  lastUserText,
  MUSIC_MODEL,
  promptText,
  songAnswer,
  usageChunk,
  usageOf,
} from './completion.js';
import { mediaSeed } from '../media/generated-media.js';
import { mediaUrl } from '../media/media.controller.js';
import { ExchangeService, writeEvents } from './exchange.js';
import { providerError } from './openai-error.js';

function isChatRequest(body: unknown): body is ChatCompletionRequest {
  const candidate = body as Partial<ChatCompletionRequest> | null;
  return (
    typeof candidate?.model === 'string' &&
    Array.isArray(candidate.messages) &&
    candidate.messages.length > 0 &&
    candidate.messages.every(
      (m) => typeof m === 'object' && m !== null && typeof m.role === 'string',
    )
  );
}

@Controller('v1/chat')
export class ChatController {
  constructor(private readonly exchanges: ExchangeService) {}

  @Post('completions')
  @HttpCode(200)
  async complete(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: unknown,
  ): Promise<void> {
    if (!isChatRequest(body)) {
      await reply
        .status(400)
        .send(
          providerError(400, { message: "'model' and a non-empty 'messages' array are required." }),
        );
      return;
    }
    const invalidResponseFormat = invalidFormat(body.response_format, 'response_format', true);
    if (invalidResponseFormat) {
      await reply.status(400).send(providerError(400, { message: invalidResponseFormat }));
      return;
    }
    const promptTokens = approximateTokens(promptText(body.messages));
    const exchange = await this.exchanges.open(request, reply, promptTokens);
    if (!exchange) return;

    const { fault, lease } = exchange;
    const model = fault.resolvedModel ?? body.model;
    const id = completionId();
    const prompt = lastUserText(body);
    const result =
      MUSIC_MODEL.test(body.model) && fault.reply === undefined
        ? songAnswer(prompt, mediaUrl(request, 'audio', mediaSeed(prompt)))
        : answer(body, fault.reply);
    const usage = usageOf(promptTokens, completionTokens(result));

    if (body.stream === true) {
      const events = completionChunks(id, model, result).map(
        (chunk) => `data: ${JSON.stringify(chunk)}\n\n`,
      );
      if (body.stream_options?.include_usage === true && !fault.omitUsage) {
        events.push(`data: ${JSON.stringify(usageChunk(id, model, usage))}\n\n`);
      }
      events.push('data: [DONE]\n\n');
      const completed = await writeEvents(exchange, events);
      lease.finish(completed ? 'served' : 'failed', usage.completion_tokens);
      return;
    }
    lease.finish('served', usage.completion_tokens);
    await reply.send(completionBody(id, model, result, fault.omitUsage ? null : usage));
  }
}
