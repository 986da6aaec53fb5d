import { type ForwardedFrontApi } from '../front-api.js';
import { openAIFamilyRequest, servedBy } from '../openai-channels.js';
import { OPENAI_SHAPE } from '../openai-shape.js';
import { bodyFor, invalid, parseJson, promptEstimate, renamedJsonBody } from '../request-body.js';

// OpenAI's moderations (docs/providers.md, "Moderations"): only openai channels serve it,
// with the client's bytes. Its answer reports no usage, so metering counts the input with
// its tokenizer and bills it at the model's input price: free when that price is 0.

/** OpenAI's default when a moderation request names no model. */
const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

/** The text of a moderation input: a string, a list of them, or text and image parts. */
function textOf(input: unknown): string {
  if (typeof input === 'string') return input;
  return (input as unknown[])
    .map((item) => {
      if (typeof item === 'string') return item;
      const part = item as { type?: unknown; text?: unknown };
      return part.type === 'text' && typeof part.text === 'string' ? part.text : '';
    })
    .join('\n');
}

function checkInput(input: unknown): void {
  const part = (p: unknown): boolean =>
    typeof p === 'string' ||
    (typeof p === 'object' &&
      p !== null &&
      !Array.isArray(p) &&
      typeof (p as { type?: unknown }).type === 'string');
  const ok =
    typeof input === 'string' || (Array.isArray(input) && input.length > 0 && input.every(part));
  if (!ok) {
    throw invalid(
      "'input' must be a string, an array of strings, or an array of text and image parts.",
      'input',
    );
  }
}

export const moderations: ForwardedFrontApi = {
  kind: 'forwarded',
  name: 'moderations',
  endpoint: 'moderations',
  routes: [{ method: 'POST', path: '/v1/moderations' }],
  ...OPENAI_SHAPE,
  renamed: renamedJsonBody,

  parse(raw) {
    const { json, bytes } = parseJson(raw);
    if (json.model !== undefined && (typeof json.model !== 'string' || json.model === '')) {
      throw invalid("'model' must be a string.", 'model');
    }
    checkInput(json.input);
    const input = json.input;
    return {
      json,
      raw: bytes,
      model: json.model ?? DEFAULT_MODERATION_MODEL,
      stream: false,
      estimatedTokens: promptEstimate(bytes),
      // A verdict has no output to bill.
      worstCaseOutputTokens: 0,
      promptText: () => textOf(input),
    };
  },

  call(body, target) {
    const provider = servedBy(target.channel, ['openai'], 'moderations');
    return {
      request: openAIFamilyRequest(
        provider,
        target,
        'moderations',
        bodyFor(body, target.upstreamModel),
      ),
      healthStatus: null,
      answer: (_status, answer) => answer,
    };
  },
};
