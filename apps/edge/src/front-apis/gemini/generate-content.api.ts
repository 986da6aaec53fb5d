import { type RoutedChannel } from '@switchyard/contracts';
import {
  ChatToGeminiStream,
  GeminiStreamRelay,
  chatAnswerToGemini,
  chatErrorToGeminiError,
  geminiInputText,
  geminiPassthroughUsage,
  geminiToChatRequest,
  geminiUpstreamError,
  type AnswerContext,
  type ChatAdapter,
  GeminiFraming,
} from '@switchyard/providers';
import { type Answer } from '../../proxy/upstream-answer.js';
import {
  adapterOf,
  convertAnswer,
  converted,
  healthOf,
  summaryOf,
  translatedAnswer,
} from '../conversion.js';
import {
  type ChannelTarget,
  type ForwardedFrontApi,
  type ParsedBody,
  type UpstreamRequest,
} from '../front-api.js';
import { DEFAULT_OUTPUT_TOKENS, invalid, parseJson, promptEstimate } from '../request-body.js';
import {
  GEMINI_SHAPE,
  checkContents,
  geminiChannelPath,
  geminiRoutes,
  methodOf,
  modelOf,
  wantsEvents,
} from './gemini-shape.js';

// Gemini's generateContent and streamGenerateContent (docs/providers.md, "Gemini's API in
// front"): a gemini channel gets the client's body on its own route (always as server-sent
// events when streamed, framed as the client asked on the way back), and its answer is read
// for its usage as it passes; every other channel gets it as an OpenAI chat completion (in
// its provider's format when it has an adapter), and its answer is converted back.

/** Whether the client asked for its stream as server-sent events, by parsed request. */
const asEvents = new WeakMap<ParsedBody, boolean>();

function answerContext(upstreamModel: string): AnswerContext {
  return { model: upstreamModel, includeUsage: true, created: Math.floor(Date.now() / 1000) };
}

function asChatCompletion(
  adapter: ChatAdapter | null,
  body: ParsedBody,
  { upstreamModel, secret, settings }: ChannelTarget,
): UpstreamRequest {
  const chat = geminiToChatRequest(body.json, upstreamModel, body.stream);
  if (adapter)
    return converted(
      adapter.chatRequest({ body: chat, upstreamModel, secret, settings }, body.stream),
    );
  return {
    path: '/chat/completions',
    providerPath: false,
    headers: { authorization: `Bearer ${secret}` },
    body: Buffer.from(JSON.stringify(chat)),
  };
}

function geminiAnswer(
  adapter: ChatAdapter | null,
  channel: RoutedChannel,
  status: number,
  answer: Answer,
  context: AnswerContext,
  framing: GeminiFraming,
): Answer {
  if (channel.provider === 'gemini') {
    if (answer.kind === 'whole')
      return status >= 400
        ? { kind: 'whole', body: geminiUpstreamError(status, answer.body) }
        : { ...answer, summary: summaryOf(geminiPassthroughUsage(answer.body, context)) };
    return translatedAnswer(answer, new GeminiStreamRelay(framing));
  }
  const chat = adapter ? convertAnswer(adapter, status, answer, context) : answer;
  if (chat.kind === 'whole') {
    if (status >= 400) return { kind: 'whole', body: chatErrorToGeminiError(status, chat.body) };
    const converted = chatAnswerToGemini(chat.body, context);
    return { kind: 'whole', body: converted.body, summary: summaryOf(converted) };
  }
  return translatedAnswer(chat, new ChatToGeminiStream(context, framing));
}

export const generateContent: ForwardedFrontApi = {
  kind: 'forwarded',
  name: 'gemini generateContent',
  endpoint: 'gemini.generate',
  routes: geminiRoutes('generateContent', 'streamGenerateContent'),
  ...GEMINI_SHAPE,

  parse(raw, line) {
    const model = modelOf(line);
    const { json, bytes } = parseJson(raw);
    checkContents(json.contents);
    const config = json.generationConfig as { maxOutputTokens?: unknown } | null | undefined;
    if (config !== undefined && (typeof config !== 'object' || config === null))
      throw invalid("'generationConfig' must be an object.", 'generationConfig');
    const max = config?.maxOutputTokens;
    const budget = typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : 0;
    const parsed: ParsedBody = {
      json,
      raw: bytes,
      model,
      stream: methodOf(line) === 'streamGenerateContent',
      estimatedTokens: promptEstimate(bytes) + budget,
      worstCaseOutputTokens: budget || DEFAULT_OUTPUT_TOKENS,
      promptText: () => geminiInputText(json),
    };
    asEvents.set(parsed, wantsEvents(line));
    return parsed;
  },

  // The model is the URL's, not the body's: a fallback asks its channels for another one
  // (each attempt's path and converted body name the channel's model), with the body as sent.
  renamed(body, model) {
    const renamed: ParsedBody = { ...body, model };
    asEvents.set(renamed, asEvents.get(body) ?? true);
    return renamed;
  },

  call(body, target) {
    const adapter = adapterOf(target.channel);
    const gemini = target.channel.provider === 'gemini';
    const method = body.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    return {
      request: gemini
        ? {
            path: geminiChannelPath(target.upstreamModel, method),
            providerPath: true,
            headers: { 'x-goog-api-key': target.secret },
            body: body.raw,
          }
        : asChatCompletion(adapter, body, target),
      healthStatus: healthOf(adapter),
      answer: (status, answer) =>
        geminiAnswer(
          adapter,
          target.channel,
          status,
          answer,
          answerContext(target.upstreamModel),
          // One framing per attempt: it counts what it wrote.
          new GeminiFraming(asEvents.get(body) ?? true),
        ),
    };
  },
};
