import {
  adapterOf,
  answerContext,
  convertAnswer,
  converted,
  healthOf,
  passedThrough,
} from '../conversion.js';
import { type ForwardedFrontApi } from '../front-api.js';
import { OPENAI_SHAPE } from '../openai-shape.js';
import {
  invalid,
  parseJson,
  promptEstimate,
  renamedJsonBody,
  requiredModel,
} from '../request-body.js';

// OpenAI's embeddings: an openai channel gets the client's bytes, a provider whose adapter
// embeds gets its request; the others do not offer it.

export const embeddings: ForwardedFrontApi = {
  kind: 'forwarded',
  name: 'embeddings',
  endpoint: 'embeddings',
  routes: [{ method: 'POST', path: '/v1/embeddings' }],
  ...OPENAI_SHAPE,
  renamed: renamedJsonBody,

  parse(raw) {
    const { json, bytes } = parseJson(raw);
    const model = requiredModel(json);
    const input = json.input;
    const ok = typeof input === 'string' || (Array.isArray(input) && input.length > 0);
    if (!ok) throw invalid("'input' must be a string or a non-empty array.", 'input');
    return {
      json,
      raw: bytes,
      model,
      stream: false,
      estimatedTokens: promptEstimate(bytes),
      // An embedding has no output to bill.
      worstCaseOutputTokens: 0,
      promptText: () =>
        Array.isArray(input)
          ? input.map((i) => (typeof i === 'string' ? i : '')).join('\n')
          : String(input),
    };
  },

  call(body, target) {
    const adapter = adapterOf(target.channel, (a) => Boolean(a?.embeddings));
    const embedder = adapter?.embeddings;
    const { upstreamModel, secret, settings } = target;
    return {
      request: embedder
        ? converted(embedder.request({ body: body.json, upstreamModel, secret, settings }))
        : passedThrough(body, target, '/embeddings'),
      healthStatus: healthOf(adapter),
      answer: (status, answer) =>
        adapter && embedder
          ? convertAnswer(adapter, status, answer, answerContext(body, upstreamModel), (b, c) =>
              embedder.answer(b, c),
            )
          : answer,
    };
  },
};
