import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { ExchangeService, writeEvents } from '../openai/exchange.js';
import { ANTHROPIC_DIALECT, anthropicError } from './anthropic-dialect.js';
import {
  answerMessages,
  invalidMessages,
  messageBody,
  messageEvents,
  messageId,
  outputTokensOf,
  promptTokensOf,
  type MessagesRequest,
} from './anthropic-message.js';

/** Anthropic's Messages API (https://docs.anthropic.com/en/api/messages), with the mock's accounts and faults. */
@Controller('v1/messages')
export class MessagesController {
  constructor(private readonly exchanges: ExchangeService) {}

  @Post()
  @HttpCode(200)
  async create(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: unknown,
  ): Promise<void> {
    if (typeof request.headers['anthropic-version'] !== 'string') {
      await reply
        .status(400)
        .send(anthropicError(400, { message: 'anthropic-version: header is required' }));
      return;
    }
    const invalid = invalidMessages(body);
    if (invalid) {
      await reply.status(400).send(anthropicError(400, { message: invalid }));
      return;
    }
    const messages = body as MessagesRequest;
    const prompt = promptTokensOf(messages);
    const exchange = await this.exchanges.open(
      request,
      reply,
      prompt.input + prompt.cached,
      ANTHROPIC_DIALECT,
    );
    if (!exchange) return;
    const { fault, lease } = exchange;
    const model = fault.resolvedModel ?? messages.model;
    const answer = answerMessages(messages, fault.reply);
    const usage = {
      input_tokens: prompt.input,
      output_tokens: outputTokensOf(answer),
      cache_read_input_tokens: prompt.cached,
      cache_creation_input_tokens: 0,
    };
    const id = messageId();
    if (messages.stream === true) {
      const completed = await writeEvents(exchange, messageEvents(id, model, answer, usage));
      lease.finish(completed ? 'served' : 'failed', usage.output_tokens);
      return;
    }
    lease.finish('served', usage.output_tokens);
    await reply.send(messageBody(id, model, answer, usage));
  }

  /** https://docs.anthropic.com/en/api/messages-count-tokens: the input as the mock counts it. */
  @Post('count_tokens')
  @HttpCode(200)
  async countTokens(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: unknown,
  ): Promise<void> {
    if (typeof request.headers['anthropic-version'] !== 'string') {
      await reply
        .status(400)
        .send(anthropicError(400, { message: 'anthropic-version: header is required' }));
      return;
    }
    // A count takes the request without its output budget.
    const invalid = invalidMessages({ max_tokens: 1, ...(body as object) });
    if (invalid) {
      await reply.status(400).send(anthropicError(400, { message: invalid }));
      return;
    }
    const exchange = await this.exchanges.open(request, reply, 0, ANTHROPIC_DIALECT);
    if (!exchange) return;
    exchange.lease.finish('served', 0);
    const prompt = promptTokensOf(body as MessagesRequest);
    await reply.send({ input_tokens: prompt.input + prompt.cached });
  }
}
