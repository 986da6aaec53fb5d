import { createHash, randomBytes } from 'node:crypto';
import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { approximateTokens } from './completion.js';
import { ExchangeService } from './exchange.js';
import { providerError } from './openai-error.js';

// OpenAI's moderations (https://platform.openai.com/docs/api-reference/moderations): one
// result per input, flagged by a few trigger words so a test can ask for a flag: the word
// "kill" is violence, "hate" is hate, "idiot" harassment, "suicide" self-harm, "nsfw"
// sexual, "steal" illicit. Other categories score a small value derived from the text.

const CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

const TRIGGERS: [RegExp, (typeof CATEGORIES)[number]][] = [
  [/\bkill/i, 'violence'],
  [/\bhate\b/i, 'hate'],
  [/\bidiot/i, 'harassment'],
  [/\bsuicide\b/i, 'self-harm'],
  [/\bnsfw\b/i, 'sexual'],
  [/\bsteal/i, 'illicit'],
];

type Input = { kind: 'text'; text: string } | { kind: 'image'; url: string };

/**
 * The inputs, each a list of parts and each with its own result (a string, each of a list
 * of strings, or a list of text and image parts as one), or null when `input` is none.
 */
function inputsOf(input: unknown): Input[][] | null {
  if (typeof input === 'string') return [[{ kind: 'text', text: input }]];
  if (!Array.isArray(input) || input.length === 0) return null;
  if (input.every((item) => typeof item === 'string'))
    return input.map((text: string) => [{ kind: 'text', text }]);
  const parts: Input[] = [];
  for (const part of input as { type?: unknown; text?: unknown; image_url?: { url?: unknown } }[]) {
    if (part?.type === 'text' && typeof part.text === 'string')
      parts.push({ kind: 'text', text: part.text });
    else if (part?.type === 'image_url' && typeof part.image_url?.url === 'string')
      parts.push({ kind: 'image', url: part.image_url.url });
    else return null;
  }
  return [parts];
}

function background(text: string, category: string): number {
  const digest = createHash('sha256').update(`${category}:${text}`).digest();
  return Number((digest.readUInt16BE(0) / 65535 / 100).toFixed(6));
}

function result(inputs: Input[]): Record<string, unknown> {
  const text = inputs.map((i) => (i.kind === 'text' ? i.text : i.url)).join('\n');
  const flagged = new Set(TRIGGERS.filter(([word]) => word.test(text)).map(([, c]) => c));
  const types = inputs.some((i) => i.kind === 'image') ? ['text', 'image'] : ['text'];
  return {
    flagged: flagged.size > 0,
    categories: Object.fromEntries(CATEGORIES.map((c) => [c, flagged.has(c)])),
    category_scores: Object.fromEntries(
      CATEGORIES.map((c) => [c, flagged.has(c) ? 0.98 : background(text, c)]),
    ),
    category_applied_input_types: Object.fromEntries(CATEGORIES.map((c) => [c, types])),
  };
}

@Controller('v1')
export class ModerationsController {
  constructor(private readonly exchanges: ExchangeService) {}

  @Post('moderations')
  @HttpCode(200)
  async moderate(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: { input?: unknown; model?: unknown } | null,
  ): Promise<void> {
    const inputs = inputsOf(body?.input);
    if (!inputs) {
      await reply.status(400).send(
        providerError(400, {
          message:
            "Invalid 'input': expected a string, an array of strings, or an array of text and image_url parts.",
        }),
      );
      return;
    }
    if (body?.model !== undefined && typeof body.model !== 'string') {
      await reply
        .status(400)
        .send(providerError(400, { message: "Invalid type for 'model': expected a string." }));
      return;
    }
    const tokens = inputs
      .flat()
      .reduce((sum, i) => sum + (i.kind === 'text' ? approximateTokens(i.text) : 0), 0);
    const exchange = await this.exchanges.open(request, reply, tokens);
    if (!exchange) return;
    exchange.lease.finish('served', 0);
    await reply.send({
      id: `modr-${randomBytes(12).toString('hex')}`,
      model: exchange.fault.resolvedModel ?? body?.model ?? 'omni-moderation-latest',
      results: inputs.map(result),
    });
  }
}
