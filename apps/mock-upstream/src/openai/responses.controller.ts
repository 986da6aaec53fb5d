import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { ExchangeService, writeEvents } from './exchange.js';
import { providerError } from './openai-error.js';
import {
  answerResponses,
  invalidResponses,
  responseBody,
  responseEvents,
  type ResponsesRequest,
} from './responses.js';

/** OpenAI's Responses API (https://platform.openai.com/docs/api-reference/responses), with the mock's accounts and faults. */
@Controller('v1/responses')
export class ResponsesController {
  constructor(private readonly exchanges: ExchangeService) {}

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
    if (responses.stream === true) {
      const completed = await writeEvents(exchange, responseEvents(responses, model, answered));
      lease.finish(completed ? 'served' : 'failed', answered.outputTokens);
      return;
    }
    lease.finish('served', answered.outputTokens);
    await reply.send(responseBody(responses, model, answered));
  }
}
