import { Body, Controller, Delete, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { ExchangeService, OPENAI_DIALECT, writeEvents, type Exchange } from './exchange.js';
import { providerError } from './openai-error.js';
import { ResponseStore, inputItemsOf, type StoredResponse } from './response-store.js';
import {
  answerResponses,
  invalidResponses,
  responseBody,
  responseEvents,
  responseIdOf,
  type ResponsesRequest,
} from './responses.js';

/**
 * OpenAI's Responses API (https://platform.openai.com/docs/api-reference/responses), with
 * the mock's accounts and faults; stored responses are kept per account key
 * (response-store.ts).
 */
@Controller('v1/responses')
export class ResponsesController {
  constructor(
    private readonly exchanges: ExchangeService,
    private readonly store: ResponseStore,
  ) {}

  @Post()
  @HttpCode(200)
  async create(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: unknown,
  ): Promise<void> {
    const invalid = invalidResponses(body);
    if (invalid) {
      await reply.status(400).send(providerError(400, { message: invalid }));
      return;
    }
    const responses = body as ResponsesRequest;
    const exchange = await this.exchanges.open(
      request,
      reply,
      answerResponses(responses).inputTokens,
    );
    if (!exchange) return;
    const { fault, lease } = exchange;
    const model = fault.resolvedModel ?? responses.model;
    const answered = answerResponses(responses, fault.reply);
    const id = responseIdOf();
    const completed = responseBody(responses, model, answered, 'completed', undefined, id);
    const background = responses.background === true && responses.stream !== true;
    const answer = background
      ? responseBody(responses, model, answered, 'queued', [], id)
      : completed;
    if (responses.store !== false)
      this.store.save(id, {
        key: OPENAI_DIALECT.keyOf(request) ?? '',
        body: answer,
        pending: background ? completed : null,
        inputItems: inputItemsOf(responses.input),
      });
    if (responses.stream === true) {
      const done = await writeEvents(exchange, responseEvents(responses, model, answered, id));
      lease.finish(done ? 'served' : 'failed', answered.outputTokens);
      return;
    }
    lease.finish('served', answered.outputTokens);
    await reply.send(answer);
  }

  /** The stored response; a background one has run by the time it is read. */
  @Get(':id')
  async retrieve(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<void> {
    await this.withStored(request, reply, id, (stored) => {
      if (stored.pending) {
        stored.body = stored.pending;
        stored.pending = null;
      }
      return stored.body;
    });
  }

  @Delete(':id')
  async remove(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<void> {
    await this.withStored(request, reply, id, () => {
      this.store.delete(id);
      return { id, object: 'response', deleted: true };
    });
  }

  /** Only a background response that has not finished can be cancelled, as at OpenAI. */
  @Post(':id/cancel')
  async cancel(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<void> {
    await this.withStored(request, reply, id, (stored) => {
      if (!stored.pending) return null;
      stored.pending = null;
      stored.body = { ...stored.body, status: 'cancelled' };
      return stored.body;
    });
  }

  @Get(':id/input_items')
  async inputItems(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<void> {
    await this.withStored(request, reply, id, (stored) => ({
      object: 'list',
      data: stored.inputItems,
      first_id: stored.inputItems[0]?.id ?? null,
      last_id: stored.inputItems.at(-1)?.id ?? null,
      has_more: false,
    }));
  }

  /**
   * Admits the follow-up like any request (its key, faults), then answers what `answer`
   * makes of the stored response: a 404 when this key stored none under `id`, a 400 when
   * `answer` refuses (null: a cancel of a response not in the background).
   */
  private async withStored(
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    answer: (stored: StoredResponse) => Record<string, unknown> | null,
  ): Promise<void> {
    const exchange: Exchange | null = await this.exchanges.open(request, reply, 0);
    if (!exchange) return;
    exchange.lease.finish('served', 0);
    const stored = this.store.find(id, OPENAI_DIALECT.keyOf(request));
    if (!stored) {
      await reply
        .status(404)
        .send(providerError(404, { code: null, message: `Response with id '${id}' not found.` }));
      return;
    }
    const body = answer(stored);
    if (!body) {
      await reply.status(400).send(
        providerError(400, {
          code: null,
          message: 'Only responses created with background=true can be cancelled.',
        }),
      );
      return;
    }
    await reply.send(body);
  }
}
