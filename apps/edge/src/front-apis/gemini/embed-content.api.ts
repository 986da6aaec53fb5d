import {
  chatErrorToGeminiError,
  embeddingsToGemini,
  geminiToEmbeddingsRequest,
  geminiUpstreamError,
} from '@switchyard/providers';
import { type Answer } from '../../proxy/upstream-answer.js';
import { adapterOf, convertAnswer, converted, healthOf } from '../conversion.js';
import { type ForwardedFrontApi, type ParsedBody } from '../front-api.js';
import { invalid, parseJson, promptEstimate } from '../request-body.js';
import {
  GEMINI_SHAPE,
  geminiChannelPath,
  geminiRoutes,
  methodOf,
  modelOf,
  checkParts,
} from './gemini-shape.js';

// Gemini's embedContent and batchEmbedContents (docs/providers.md, "Gemini's API in front"):
// a gemini channel gets the client's request on its own route (the model each batched
// request names renamed to the channel's); a channel whose provider embeds gets it as
// OpenAI's embeddings request, and its list comes back in Gemini's shape. An embedding has
// no output: Gemini reports no tokens, so metering counts the input.

type Json = Record<string, unknown>;

/** Whether the request is a batch, by parsed request. */
const batches = new WeakMap<ParsedBody, boolean>();

function texts(content: unknown): string {
  const parts = (content as { parts?: unknown } | null)?.parts;
  return (Array.isArray(parts) ? (parts as { text?: unknown }[]) : [])
    .map((part) => (typeof part?.text === 'string' ? part.text : ''))
    .join('');
}

function checkContent(content: unknown, param: string): void {
  const parts = (content as { parts?: unknown } | null)?.parts;
  if (typeof content !== 'object' || content === null || !Array.isArray(parts))
    throw invalid(`'${param}.parts' must be an array of parts.`, `${param}.parts`);
  checkParts(parts, `${param}.parts`);
}

/** A gemini channel's body: the model each request names is the channel's. */
function forChannel(body: ParsedBody, batch: boolean, upstreamModel: string): Buffer {
  const model = `models/${upstreamModel.replace(/^models\//, '')}`;
  if (!batch)
    return body.json.model === undefined
      ? body.raw
      : Buffer.from(JSON.stringify({ ...body.json, model }));
  const requests = (body.json.requests as Json[]).map((request) => ({ ...request, model }));
  return Buffer.from(JSON.stringify({ ...body.json, requests }));
}

function embedAnswer(status: number, answer: Answer, batch: boolean, model: string): Answer {
  if (answer.kind !== 'whole') return answer;
  if (status >= 400) return { kind: 'whole', body: chatErrorToGeminiError(status, answer.body) };
  const { body, usage } = embeddingsToGemini(answer.body, batch);
  return { kind: 'whole', body, summary: { usage, model, completionText: '', items: 0 } };
}

export const geminiEmbedContent: ForwardedFrontApi = {
  kind: 'forwarded',
  name: 'gemini embedContent',
  endpoint: 'gemini.embed',
  routes: geminiRoutes('embedContent', 'batchEmbedContents'),
  ...GEMINI_SHAPE,

  parse(raw, line) {
    const model = modelOf(line);
    const { json, bytes } = parseJson(raw);
    const batch = methodOf(line) === 'batchEmbedContents';
    let contents: unknown[];
    if (batch) {
      if (!Array.isArray(json.requests) || json.requests.length === 0)
        throw invalid("'requests' must be a non-empty array.", 'requests');
      contents = (json.requests as unknown[]).map(
        (r) => (r as { content?: unknown } | null)?.content,
      );
      contents.forEach((content, index) => checkContent(content, `requests[${index}].content`));
    } else {
      checkContent(json.content, 'content');
      contents = [json.content];
    }
    const parsed: ParsedBody = {
      json,
      raw: bytes,
      model,
      stream: false,
      estimatedTokens: promptEstimate(bytes),
      worstCaseOutputTokens: 0,
      promptText: () => contents.map(texts).join('\n'),
    };
    batches.set(parsed, batch);
    return parsed;
  },

  call(body, target) {
    const batch = batches.get(body) ?? false;
    const { upstreamModel, secret, settings } = target;
    if (target.channel.provider === 'gemini')
      return {
        request: {
          path: geminiChannelPath(upstreamModel, batch ? 'batchEmbedContents' : 'embedContent'),
          providerPath: true,
          headers: { 'x-goog-api-key': secret },
          body: forChannel(body, batch, upstreamModel),
        },
        healthStatus: healthOf(adapterOf(target.channel)),
        answer: (status, answer): Answer => {
          if (answer.kind !== 'whole') return answer;
          if (status >= 400)
            return { kind: 'whole', body: geminiUpstreamError(status, answer.body) };
          const summary = { usage: null, model: upstreamModel, completionText: '', items: 0 };
          return { ...answer, summary };
        },
      };
    const adapter = adapterOf(target.channel, (a) => Boolean(a?.embeddings));
    const embedder = adapter?.embeddings;
    const request = geminiToEmbeddingsRequest(body.json, upstreamModel, batch);
    const context = { model: upstreamModel, includeUsage: false, created: 0 };
    return {
      request: embedder
        ? converted(embedder.request({ body: request, upstreamModel, secret, settings }))
        : {
            path: '/embeddings',
            providerPath: false,
            headers: { authorization: `Bearer ${secret}` },
            body: Buffer.from(JSON.stringify(request)),
          },
      healthStatus: healthOf(adapter),
      answer: (status, answer) =>
        embedAnswer(
          status,
          adapter && embedder
            ? convertAnswer(adapter, status, answer, context, (b, c) => embedder.answer(b, c))
            : answer,
          batch,
          upstreamModel,
        ),
    };
  },
};
