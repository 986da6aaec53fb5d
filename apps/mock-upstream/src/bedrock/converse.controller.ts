import { Body, Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { AccountPool } from '../accounts/account-pool.js';
import { ExchangeService, writeEvents } from '../openai/exchange.js';
import { bedrockDialect, bedrockError } from './bedrock-dialect.js';
import { checkSignature } from './bedrock-signature.js';
import {
  answerConverse,
  converseBody,
  converseStream,
  invalidConverse,
  usageOf,
  type ConverseRequest,
} from './converse-content.js';

/** The foundation models the mock lists, as Bedrock's control plane names them. */
export const BEDROCK_MODELS = [
  { modelId: 'anthropic.claude-3-haiku-20240307-v1:0', providerName: 'Anthropic', output: 'TEXT' },
  { modelId: 'amazon.nova-lite-v1:0', providerName: 'Amazon', output: 'TEXT' },
  { modelId: 'amazon.titan-embed-text-v2:0', providerName: 'Amazon', output: 'EMBEDDING' },
];

/**
 * Amazon Bedrock's runtime (`/model/{modelId}/converse`, `/converse-stream`) and the control
 * plane's `GET /foundation-models`, with the mock's accounts and faults. Every request must
 * carry a valid Signature V4 from one of the accounts' key pairs.
 */
@Controller()
export class ConverseController {
  constructor(
    private readonly exchanges: ExchangeService,
    private readonly accounts: AccountPool,
  ) {}

  @Post('model/:modelId/converse')
  @HttpCode(200)
  converse(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: unknown,
  ): Promise<void> {
    return this.answer(request, reply, body, false);
  }

  @Post('model/:modelId/converse-stream')
  @HttpCode(200)
  converseStream(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: unknown,
  ): Promise<void> {
    return this.answer(request, reply, body, true);
  }

  @Get('foundation-models')
  async foundationModels(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const signed = await checkSignature(request, this.accounts, 'bedrock');
    if (!signed.ok) {
      await refuse(reply, 403, signed.code, signed.message);
      return;
    }
    await reply.send({
      modelSummaries: BEDROCK_MODELS.map((model) => ({
        modelArn: `arn:aws:bedrock:us-east-1::foundation-model/${model.modelId}`,
        modelId: model.modelId,
        providerName: model.providerName,
        inputModalities: ['TEXT'],
        outputModalities: [model.output],
        responseStreamingSupported: model.output === 'TEXT',
        inferenceTypesSupported: ['ON_DEMAND'],
        modelLifecycle: { status: 'ACTIVE' },
      })),
    });
  }

  private async answer(
    request: FastifyRequest,
    reply: FastifyReply,
    body: unknown,
    stream: boolean,
  ): Promise<void> {
    const signed = await checkSignature(request, this.accounts, 'bedrock');
    if (!signed.ok) {
      await refuse(reply, 403, signed.code, signed.message);
      return;
    }
    const invalid = invalidConverse(body);
    if (invalid) {
      await refuse(reply, 400, 'ValidationException', invalid);
      return;
    }
    const converse = body as ConverseRequest;
    const prompt = usageOf(converse, { kind: 'text', text: '' });
    const exchange = await this.exchanges.open(
      request,
      reply,
      prompt.inputTokens + prompt.cacheReadInputTokens,
      bedrockDialect(signed.key),
    );
    if (!exchange) return;
    const { fault, lease } = exchange;
    const answer = answerConverse(converse, fault.reply);
    const usage = usageOf(converse, answer);
    if (!stream) {
      lease.finish('served', usage.outputTokens);
      await reply.send(converseBody(answer, usage));
      return;
    }
    const frames = converseStream(answer, usage);
    const completed = await writeEvents(
      exchange,
      fault.omitUsage ? frames.slice(0, -1) : frames,
      'application/vnd.amazon.eventstream',
    );
    lease.finish(completed ? 'served' : 'failed', usage.outputTokens);
  }
}

async function refuse(
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
): Promise<void> {
  await reply
    .status(status)
    .header('x-amzn-errortype', code)
    .send(bedrockError(status, { message }));
}
