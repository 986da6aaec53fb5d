import { randomBytes } from 'node:crypto';
import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { approximateTokens, pieces, usageOf } from './completion.js';
import { ExchangeService, writeEvents } from './exchange.js';
import { providerError } from './openai-error.js';

// OpenAI's legacy completions (https://platform.openai.com/docs/api-reference/completions):
// a prompt, or a list of prompts (as text or token ids), each answered with its echo (or
// what the test told the mock to say), `n` choices apiece, as JSON or as server-sent
// events with an optional usage chunk.

interface TextCompletionRequest {
  model: string;
  prompt: string | string[] | number[] | number[][];
  n?: number;
  echo?: boolean;
  suffix?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

function isTokens(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((t) => Number.isInteger(t));
}

/** The prompts as texts (token ids stand for themselves, joined by spaces), or null. */
function promptsOf(prompt: unknown): string[] | null {
  if (typeof prompt === 'string') return [prompt];
  if (isTokens(prompt) && prompt.length > 0) return [prompt.join(' ')];
  if (!Array.isArray(prompt) || prompt.length === 0) return null;
  if (prompt.every((p) => typeof p === 'string')) return prompt;
  if (prompt.every(isTokens)) return prompt.map((tokens) => tokens.join(' '));
  return null;
}

/** OpenAI's 400 for what it would refuse, or null. */
function invalidCompletion(body: Partial<TextCompletionRequest> | null): string | null {
  if (typeof body?.model !== 'string') return "Missing required parameter: 'model'.";
  if (body.prompt === undefined) return "Missing required parameter: 'prompt'.";
  if (!promptsOf(body.prompt))
    return "Invalid type for 'prompt': expected a string, an array of strings, or an array of token arrays.";
  if (body.n !== undefined && (!Number.isInteger(body.n) || body.n < 1 || body.n > 128))
    return `Invalid 'n': integer between 1 and 128 expected, got ${JSON.stringify(body.n)}.`;
  if (body.suffix != null && typeof body.suffix !== 'string')
    return "Invalid type for 'suffix': expected a string.";
  return null;
}

@Controller('v1')
export class TextCompletionsController {
  constructor(private readonly exchanges: ExchangeService) {}

  @Post('completions')
  @HttpCode(200)
  async complete(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: Partial<TextCompletionRequest> | null,
  ): Promise<void> {
    const invalid = invalidCompletion(body);
    if (invalid) {
      await reply.status(400).send(providerError(400, { message: invalid }));
      return;
    }
    const completion = body as TextCompletionRequest;
    const prompts = promptsOf(completion.prompt)!;
    const promptTokens = prompts.reduce((sum, p) => sum + approximateTokens(p), 0);
    const exchange = await this.exchanges.open(request, reply, promptTokens);
    if (!exchange) return;
    const { fault, lease } = exchange;
    const model = fault.resolvedModel ?? completion.model;
    const n = completion.n ?? 1;
    // Choice i answers prompt floor(i / n), as OpenAI numbers them.
    const texts = prompts.flatMap((prompt) => {
      const text = fault.reply ?? `Echo: ${prompt}`;
      return Array.from({ length: n }, () => (completion.echo ? prompt + text : text));
    });
    const usage = usageOf(
      promptTokens,
      texts.reduce((sum, text) => sum + approximateTokens(text), 0),
    );
    const id = `cmpl-${randomBytes(12).toString('hex')}`;
    const created = Math.floor(Date.now() / 1000);
    const base = { id, object: 'text_completion', created, model };
    const choice = (text: string, index: number, finish: string | null) => ({
      text,
      index,
      logprobs: null,
      finish_reason: finish,
    });

    if (completion.stream === true) {
      const events: string[] = [];
      const sse = (data: unknown) => events.push(`data: ${JSON.stringify(data)}\n\n`);
      texts.forEach((text, index) => {
        for (const piece of pieces(text)) sse({ ...base, choices: [choice(piece, index, null)] });
        sse({ ...base, choices: [choice('', index, 'stop')] });
      });
      if (completion.stream_options?.include_usage === true && !fault.omitUsage)
        sse({ ...base, choices: [], usage });
      events.push('data: [DONE]\n\n');
      const completed = await writeEvents(exchange, events);
      lease.finish(completed ? 'served' : 'failed', usage.completion_tokens);
      return;
    }
    lease.finish('served', usage.completion_tokens);
    await reply.send({
      ...base,
      choices: texts.map((text, index) => choice(text, index, 'stop')),
      ...(fault.omitUsage ? {} : { usage }),
    });
  }
}
