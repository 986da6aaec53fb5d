import { Body, Controller, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
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
  promptText,
  usageChunk,
  usageOf,
} from '../openai/completion.js';
import { embed, encodedEmbedding } from '../openai/embeddings.controller.js';
import { ExchangeService, writeEvents } from '../openai/exchange.js';
import { AZURE_DIALECT, azureError } from './azure-dialect.js';

// Azure OpenAI's deployment routes: OpenAI's bodies, the deployment in the path, the
// `api-version` query required, and the content-filter annotations Azure adds
// (https://learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter).

/** The first API version that takes `stream_options`; older ones refuse the argument. */
const STREAM_OPTIONS_SINCE = '2024-09-01';

const SAFE = { filtered: false, severity: 'safe' };
const FILTER_RESULTS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };
const PROMPT_FILTER_RESULTS = [{ prompt_index: 0, content_filter_results: FILTER_RESULTS }];

function sse(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

@Controller('openai/deployments')
export class DeploymentsController {
  constructor(private readonly exchanges: ExchangeService) {}

  @Post(':deployment/chat/completions')
  @HttpCode(200)
  async complete(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('deployment') deployment: string,
    @Query('api-version') apiVersion: string | undefined,
    @Body() body: Partial<ChatCompletionRequest> | null,
  ): Promise<void> {
    if (!apiVersion) {
      await reply.status(404).send({ error: { code: '404', message: 'Resource not found' } });
      return;
    }
    if (!Array.isArray(body?.messages) || body.messages.length === 0) {
      await reply
        .status(400)
        .send(azureError(400, { message: "'messages' is a required property" }));
      return;
    }
    const invalidResponseFormat = invalidFormat(body.response_format, 'response_format', true);
    if (invalidResponseFormat) {
      await reply.status(400).send(azureError(400, { message: invalidResponseFormat }));
      return;
    }
    if (body.stream_options !== undefined && apiVersion < STREAM_OPTIONS_SINCE) {
      await reply
        .status(400)
        .send(
          azureError(400, { message: 'Unrecognized request argument supplied: stream_options' }),
        );
      return;
    }
    const chat = { ...body, model: deployment } as ChatCompletionRequest;
    const promptTokens = approximateTokens(promptText(chat.messages));
    const exchange = await this.exchanges.open(request, reply, promptTokens, AZURE_DIALECT);
    if (!exchange) return;
    const { fault, lease } = exchange;
    const model = fault.resolvedModel ?? deployment;
    const id = completionId();
    const result = answer(chat, fault.reply);
    const usage = usageOf(promptTokens, completionTokens(result));

    if (chat.stream === true) {
      const events = [
        // Azure announces the prompt's filter results before the answer, with no choices.
        sse({
          choices: [],
          created: 0,
          id: '',
          model: '',
          object: '',
          prompt_filter_results: PROMPT_FILTER_RESULTS,
        }),
        ...completionChunks(id, model, result).map((chunk) =>
          sse({
            ...chunk,
            choices: chunk.choices.map((choice) => ({ ...choice, content_filter_results: {} })),
          }),
        ),
      ];
      if (chat.stream_options?.include_usage === true && !fault.omitUsage)
        events.push(sse(usageChunk(id, model, usage)));
      events.push('data: [DONE]\n\n');
      const completed = await writeEvents(exchange, events);
      lease.finish(completed ? 'served' : 'failed', usage.completion_tokens);
      return;
    }
    lease.finish('served', usage.completion_tokens);
    const completion = completionBody(id, model, result, fault.omitUsage ? null : usage);
    await reply.send({
      ...completion,
      prompt_filter_results: PROMPT_FILTER_RESULTS,
      choices: completion.choices.map((choice) => ({
        ...choice,
        content_filter_results: FILTER_RESULTS,
      })),
    });
  }

  @Post(':deployment/embeddings')
  @HttpCode(200)
  async embeddings(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('deployment') deployment: string,
    @Query('api-version') apiVersion: string | undefined,
    @Body() body: { input?: unknown; dimensions?: unknown; encoding_format?: unknown } | null,
  ): Promise<void> {
    if (!apiVersion) {
      await reply.status(404).send({ error: { code: '404', message: 'Resource not found' } });
      return;
    }
    const input = body?.input;
    const texts =
      typeof input === 'string' ? [input] : Array.isArray(input) ? input.map(String) : null;
    if (!texts || texts.length === 0) {
      await reply.status(400).send(azureError(400, { message: "'input' is a required property" }));
      return;
    }
    const tokens = texts.reduce((sum, text) => sum + approximateTokens(text), 0);
    const exchange = await this.exchanges.open(request, reply, tokens, AZURE_DIALECT);
    if (!exchange) return;
    const dimensions = typeof body?.dimensions === 'number' ? Math.min(body.dimensions, 3072) : 8;
    exchange.lease.finish('served', 0);
    await reply.send({
      object: 'list',
      model: exchange.fault.resolvedModel ?? deployment,
      data: texts.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: encodedEmbedding(embed(text, dimensions), body?.encoding_format === 'base64'),
      })),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }
}
