import { adapterOf, passedThrough } from '../conversion.js';
import { type ForwardedFrontApi } from '../front-api.js';
import { OPENAI_SHAPE } from '../openai-shape.js';
import { invalid, parseJson, promptEstimate, renamedJsonBody } from '../request-body.js';

// OpenAI's image generation: only openai channels offer it, and get the client's bytes.

/** OpenAI's default when an image request names no model. */
const DEFAULT_IMAGE_MODEL = 'dall-e-2';
/** What metering bills an image without token usage: this many completion tokens. */
const TOKENS_PER_IMAGE = 1_000;

export const images: ForwardedFrontApi = {
  kind: 'forwarded',
  name: 'images',
  endpoint: 'images.generations',
  routes: [{ method: 'POST', path: '/v1/images/generations' }],
  ...OPENAI_SHAPE,
  renamed: renamedJsonBody,

  parse(raw) {
    const { json, bytes } = parseJson(raw);
    if (json.model !== undefined && (typeof json.model !== 'string' || json.model === '')) {
      throw invalid("'model' must be a string.", 'model');
    }
    if (typeof json.prompt !== 'string' || json.prompt.trim() === '')
      throw invalid("'prompt' is required and must be a string.", 'prompt');
    const prompt = json.prompt;
    const n = json.n;
    return {
      json,
      raw: bytes,
      model: json.model ?? DEFAULT_IMAGE_MODEL,
      stream: false,
      estimatedTokens: promptEstimate(bytes),
      worstCaseOutputTokens:
        (typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : 1) * TOKENS_PER_IMAGE,
      promptText: () => prompt,
    };
  },

  call(body, target) {
    adapterOf(target.channel, () => false);
    return {
      request: passedThrough(body, target, '/images/generations'),
      healthStatus: null,
      answer: (_status, answer) => answer,
    };
  },

  imagesOf: (summary) => summary.items,
};
