import { geminiInputText, geminiUpstreamError } from '@switchyard/providers';
import { type Answer } from '../../proxy/upstream-answer.js';
import { countLocally } from '../count-tokens/local-token-count.js';
import { adapterOf, healthOf } from '../conversion.js';
import { type ForwardedFrontApi } from '../front-api.js';
import { invalid, parseJson, promptEstimate } from '../request-body.js';
import {
  GEMINI_SHAPE,
  checkContents,
  geminiChannelPath,
  geminiRoutes,
  modelOf,
} from './gemini-shape.js';

// Gemini's countTokens (docs/providers.md, "Gemini's API in front"): a gemini channel is
// asked; for any other the edge counts with metering's tokenizer, and the channel is not
// asked (nor judged). The request is `contents` (with no system instruction nor tools, as
// Google's API takes it) or a whole `generateContentRequest`.

type Json = Record<string, unknown>;

/** What is counted: the whole generateContent request when one is given. */
function countedRequest(json: Json): Json {
  const whole = json.generateContentRequest;
  return typeof whole === 'object' && whole !== null ? (whole as Json) : json;
}

/**
 * A count is free: metered as no tokens, never counted again by metering's tokenizer. An
 * error is put in Google's shape when the channel's is not.
 */
function free(status: number, answer: Answer, model: string): Answer {
  if (answer.kind !== 'whole') return answer;
  if (status >= 400) return { kind: 'whole', body: geminiUpstreamError(status, answer.body) };
  return {
    ...answer,
    summary: {
      usage: { promptTokens: 0, completionTokens: 0 },
      model,
      completionText: '',
      items: 0,
    },
  };
}

export const geminiCountTokens: ForwardedFrontApi = {
  kind: 'forwarded',
  name: 'gemini countTokens',
  endpoint: 'gemini.count_tokens',
  routes: geminiRoutes('countTokens'),
  ...GEMINI_SHAPE,

  parse(raw, line) {
    const model = modelOf(line);
    const { json, bytes } = parseJson(raw);
    const whole = json.generateContentRequest;
    if (whole !== undefined) {
      if (typeof whole !== 'object' || whole === null || Array.isArray(whole))
        throw invalid("'generateContentRequest' must be an object.", 'generateContentRequest');
      checkContents((whole as Json).contents, 'generateContentRequest.contents');
    } else checkContents(json.contents);
    return {
      json,
      raw: bytes,
      model,
      stream: false,
      estimatedTokens: promptEstimate(bytes),
      worstCaseOutputTokens: null,
      promptText: () => geminiInputText(countedRequest(json)),
    };
  },

  call(body, target) {
    const model = target.upstreamModel;
    if (target.channel.provider !== 'gemini')
      return {
        local: async () => {
          const totalTokens = await countLocally(model, body.promptText());
          const answer = Buffer.from(JSON.stringify({ totalTokens }));
          return free(200, { kind: 'whole', body: answer }, model);
        },
      };
    const whole = body.json.generateContentRequest as Json | undefined;
    // The whole request names its model, which must be the channel's.
    const sent = whole
      ? Buffer.from(
          JSON.stringify({
            ...body.json,
            generateContentRequest: { ...whole, model: `models/${model.replace(/^models\//, '')}` },
          }),
        )
      : body.raw;
    return {
      request: {
        path: geminiChannelPath(model, 'countTokens'),
        providerPath: true,
        headers: { 'x-goog-api-key': target.secret },
        body: sent,
      },
      healthStatus: healthOf(adapterOf(target.channel)),
      answer: (status, answer) => free(status, answer, model),
    };
  },
};
