import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { embed } from '../openai/embeddings.controller.js';
import { ExchangeService, writeEvents } from '../openai/exchange.js';
import { approximateTokens } from '../openai/completion.js';
import {
  answerContent,
  candidatesTokensOf,
  generateContentBody,
  generateContentStream,
  invalidGenerateContent,
  promptTokensOf,
  responseId,
  usageMetadata,
  type GenerateContentRequest,
} from './gemini-content.js';
import { GEMINI_DIALECT, geminiError } from './gemini-dialect.js';

interface BatchEmbedRequest {
  requests?: {
    model?: string;
    content?: { parts?: { text?: string }[] };
    outputDimensionality?: number;
  }[];
}

/**
 * The Gemini API's model methods (https://ai.google.dev/api): `models/{model}:generateContent`,
 * `:streamGenerateContent` (`alt=sse` for server-sent events, a JSON array otherwise) and
 * `:batchEmbedContents` with `:embedContent`, and `:countTokens`, with the mock's accounts
 * and faults (a count takes neither an account's capacity nor a fault: Google's is free).
 */
@Controller('v1beta/models')
export class GenerateContentController {
  constructor(private readonly exchanges: ExchangeService) {}

  /** `models.list`: what the key may call, each with the methods it supports. */
  @Get()
  list(): unknown {
    return {
      models: [
        ['gemini-2.5-flash', ['generateContent', 'countTokens', 'createCachedContent']],
        ['gemini-embedding-001', ['embedContent', 'countTokens']],
        ['aqa', ['generateAnswer']],
      ].map(([name, methods]) => ({
        name: `models/${name as string}`,
        displayName: name,
        supportedGenerationMethods: methods,
      })),
    };
  }

  @Post(':target')
  @HttpCode(200)
  async call(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('target') target: string,
    @Query('alt') alt: string | undefined,
    @Body() body: unknown,
  ): Promise<void> {
    const at = target.lastIndexOf(':');
    const model = at > 0 ? target.slice(0, at) : target;
    const method = at > 0 ? target.slice(at + 1) : '';
    try {
      if (method === 'generateContent' || method === 'streamGenerateContent')
        return await this.generate(
          request,
          reply,
          model,
          body,
          method === 'streamGenerateContent',
          alt,
        );
      if (method === 'batchEmbedContents') return await this.embed(request, reply, model, body);
      if (method === 'embedContent') return await this.embedOne(request, reply, model, body);
      if (method === 'countTokens') return await this.countTokens(reply, model, body);
    } catch (error) {
      // A body of the wrong shape deep inside (a part's field of another type): Google
      // answers 400 to what it cannot read, never 500, and so does the mock.
      if (!(error instanceof TypeError) || reply.sent) throw error;
      await reply
        .status(400)
        .send(geminiError(400, { message: `Invalid JSON payload received. ${error.message}` }));
      return;
    }
    await reply.status(404).send(
      geminiError(404, {
        message: `models/${model} is not found for API version v1beta, or is not supported for ${method || 'this method'}.`,
      }),
    );
  }

  private async generate(
    request: FastifyRequest,
    reply: FastifyReply,
    model: string,
    body: unknown,
    stream: boolean,
    alt: string | undefined,
  ): Promise<void> {
    const invalid = invalidGenerateContent(body, model);
    if (invalid) {
      await reply.status(400).send(geminiError(400, { message: invalid }));
      return;
    }
    const generate = body as GenerateContentRequest;
    const prompt = promptTokensOf(generate);
    const exchange = await this.exchanges.open(request, reply, prompt.prompt, GEMINI_DIALECT);
    if (!exchange) return;
    const { fault, lease } = exchange;
    const version = fault.resolvedModel ?? model;
    const answer = answerContent(generate, fault.reply);
    const candidates = candidatesTokensOf(answer);
    const id = responseId();
    if (!stream) {
      lease.finish('served', candidates);
      await reply.send(generateContentBody(answer, usageMetadata(prompt, candidates), version, id));
      return;
    }
    const responses = generateContentStream(answer, prompt, candidates, version, id);
    if (alt !== 'sse') {
      lease.finish('served', candidates);
      await reply.send(responses);
      return;
    }
    // Google's event stream separates its events with CRLF pairs.
    const events = responses.map((response) => `data: ${JSON.stringify(response)}\r\n\r\n`);
    const completed = await writeEvents(exchange, events);
    lease.finish(completed ? 'served' : 'failed', candidates);
  }

  private async embed(
    request: FastifyRequest,
    reply: FastifyReply,
    model: string,
    body: unknown,
  ): Promise<void> {
    const requests = (body as BatchEmbedRequest | null)?.requests;
    if (!Array.isArray(requests) || requests.length === 0) {
      await reply
        .status(400)
        .send(geminiError(400, { message: '* BatchEmbedContentsRequest.requests: is empty' }));
      return;
    }
    const stray = requests.findIndex((r) => r.model !== `models/${model}`);
    if (stray >= 0) {
      await reply.status(400).send(
        geminiError(400, {
          message: `* BatchEmbedContentsRequest.requests[${stray}].model: model must be models/${model}`,
        }),
      );
      return;
    }
    const texts = requests.map((r) =>
      (r.content?.parts ?? []).map((p) => (typeof p?.text === 'string' ? p.text : '')).join(''),
    );
    const tokens = texts.reduce((sum, text) => sum + approximateTokens(text), 0);
    const exchange = await this.exchanges.open(request, reply, tokens, GEMINI_DIALECT);
    if (!exchange) return;
    exchange.lease.finish('served', 0);
    await reply.send({
      embeddings: requests.map((r, index) => ({
        values: embed(texts[index]!, Math.min(r.outputDimensionality ?? 8, 3072)),
      })),
    });
  }

  /** `embedContent`: one content, answered as `batchEmbedContents` answers each. */
  private async embedOne(
    request: FastifyRequest,
    reply: FastifyReply,
    model: string,
    body: unknown,
  ): Promise<void> {
    const one = body as {
      content?: { parts?: { text?: string }[] };
      outputDimensionality?: number;
    };
    if (!Array.isArray(one?.content?.parts)) {
      await reply
        .status(400)
        .send(
          geminiError(400, { message: '* EmbedContentRequest.content: contents is not specified' }),
        );
      return;
    }
    // Google answers a malformed part with a 400; the mock reads what text there is.
    const text = one.content.parts.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
    const exchange = await this.exchanges.open(
      request,
      reply,
      approximateTokens(text),
      GEMINI_DIALECT,
    );
    if (!exchange) return;
    exchange.lease.finish('served', 0);
    await reply.send({
      embedding: { values: embed(text, Math.min(one.outputDimensionality ?? 8, 3072)) },
    });
  }

  /** `countTokens`: `contents`, or a whole `generateContentRequest` (which names the model). */
  private async countTokens(reply: FastifyReply, model: string, body: unknown): Promise<void> {
    const count = body as {
      contents?: unknown;
      generateContentRequest?: GenerateContentRequest & { model?: string };
    };
    const whole = count?.generateContentRequest;
    if (whole && whole.model !== `models/${model}`) {
      await reply.status(400).send(
        geminiError(400, {
          message: `* CountTokensRequest.generateContentRequest.model: must be models/${model}`,
        }),
      );
      return;
    }
    // The whole request names its model, which generateContent takes from the URL.
    const named = { ...(whole ?? { contents: count?.contents }) } as Record<string, unknown>;
    delete named.model;
    const generate = named as unknown as GenerateContentRequest;
    const invalid = invalidGenerateContent(generate, model);
    if (invalid) {
      await reply.status(400).send(geminiError(400, { message: invalid }));
      return;
    }
    await reply.send({ totalTokens: promptTokensOf(generate).prompt });
  }
}
