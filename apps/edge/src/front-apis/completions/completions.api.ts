import { DEFAULT_AZURE_API_VERSION, chatAdapterFor } from '@switchyard/providers';
import { answerContext, translatedAnswer } from '../conversion.js';
import { type ChannelTarget, type ForwardedFrontApi } from '../front-api.js';
import {
  familyHealth,
  openAIFamilyRequest,
  servedBy,
  type OpenAIFamily,
} from '../openai-channels.js';
import { OPENAI_SHAPE } from '../openai-shape.js';
import {
  checkStreamFlag,
  completionBudget,
  DEFAULT_OUTPUT_TOKENS,
  invalid,
  parseJson,
  promptEstimate,
  renamedJsonBody,
  requiredModel,
} from '../request-body.js';

// OpenAI's legacy text completions (docs/providers.md, "Legacy completions"): served by
// openai and azure channels as they are. The other providers are passed over rather than
// converted through chat: a chat model answers a prompt as a conversation, not as its
// continuation, and `echo`, `suffix`, `logprobs`, `best_of` and several prompts at once have
// no chat equivalent, so a converted answer would only look like a completion.

function checkPrompt(prompt: unknown): void {
  const tokens = (value: unknown): boolean =>
    Array.isArray(value) && value.length > 0 && value.every((t) => Number.isInteger(t));
  const ok =
    typeof prompt === 'string' ||
    (Array.isArray(prompt) &&
      prompt.length > 0 &&
      (prompt.every((p) => typeof p === 'string') ||
        tokens(prompt) ||
        prompt.every((p) => tokens(p))));
  if (!ok) {
    throw invalid(
      "'prompt' must be a string, an array of strings, or token ids (an array of integers, or of such arrays).",
      'prompt',
    );
  }
}

/** `n` and `best_of` each multiply what the request may produce. */
function choicesOf(json: Record<string, unknown>): number {
  const count = (value: unknown): number =>
    typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : 1;
  // A list of texts, or of token-id lists, is that many prompts; one list of ids is one.
  const prompt = json.prompt;
  const prompts = Array.isArray(prompt) && typeof prompt[0] !== 'number' ? prompt.length : 1;
  return prompts * Math.max(count(json.n), count(json.best_of));
}

/** Azure refuses `stream_options` before this API version (docs/providers.md, "Azure OpenAI"). */
const AZURE_STREAM_USAGE_SINCE = '2024-09-01';

function reportsStreamUsage(provider: OpenAIFamily, target: ChannelTarget): boolean {
  if (provider === 'openai') return true;
  return (target.settings.apiVersion ?? DEFAULT_AZURE_API_VERSION) >= AZURE_STREAM_USAGE_SINCE;
}

export const completions: ForwardedFrontApi = {
  kind: 'forwarded',
  name: 'completions',
  endpoint: 'completions',
  routes: [{ method: 'POST', path: '/v1/completions' }],
  ...OPENAI_SHAPE,
  renamed: renamedJsonBody,

  parse(raw) {
    const { json, bytes } = parseJson(raw);
    const model = requiredModel(json);
    checkPrompt(json.prompt);
    checkStreamFlag(json);
    const budget = completionBudget(json);
    const prompt = json.prompt;
    return {
      json,
      raw: bytes,
      model,
      stream: json.stream === true,
      estimatedTokens: promptEstimate(bytes) + budget,
      worstCaseOutputTokens: (budget || DEFAULT_OUTPUT_TOKENS) * choicesOf(json),
      // Token ids are not text: without reported usage they count as nothing.
      promptText: () =>
        typeof prompt === 'string'
          ? prompt
          : (prompt as unknown[]).filter((p): p is string => typeof p === 'string').join('\n'),
    };
  },

  call(body, target) {
    const provider = servedBy(target.channel, ['openai', 'azure'], 'the legacy completions API');
    const options = body.json.stream_options as { include_usage?: unknown } | null | undefined;
    // A stream is metered from the upstream's count: the usage chunk is asked for, and
    // taken out again on its way back when the client did not ask. Azure's chat stream
    // translator does exactly that for any OpenAI stream whose chunks carry `choices`, and
    // ends a stream cut before `[DONE]` with the interruption event.
    const json =
      body.stream && options?.include_usage !== true && reportsStreamUsage(provider, target)
        ? { ...body.json, stream_options: { ...options, include_usage: true } }
        : body.json;
    const bytes =
      json === body.json && target.upstreamModel === body.model
        ? body.raw
        : Buffer.from(JSON.stringify({ ...json, model: target.upstreamModel }));
    return {
      request: openAIFamilyRequest(provider, target, 'completions', bytes),
      healthStatus: familyHealth(provider),
      answer: (_status, answer) =>
        answer.kind === 'stream'
          ? translatedAnswer(
              answer,
              chatAdapterFor('azure')!.chatStream(answerContext(body, target.upstreamModel)),
            )
          : answer,
    };
  },
};
