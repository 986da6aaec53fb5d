import { inputText } from '@switchyard/providers';
import { type Answer } from '../../proxy/upstream-answer.js';
import { ANTHROPIC_SHAPE, checkAnthropicMessages, toAnthropicChannel } from '../anthropic-shape.js';
import { adapterOf, healthOf } from '../conversion.js';
import { type ForwardedFrontApi } from '../front-api.js';
import {
  checkStreamFlag,
  completionBudget,
  parseJson,
  promptEstimate,
  requiredModel,
} from '../request-body.js';
import { localTokenCount } from './local-token-count.js';

// Anthropic's token count (docs/providers.md, "Anthropic's API in front"): an anthropic
// channel is asked; for any other the edge counts itself (local-token-count.ts), and the
// channel is not asked (nor judged).

/**
 * A token count is free: its answer (an anthropic channel's, or the edge's own) is metered
 * as no tokens, never counted again by metering's tokenizer.
 */
function countTokensAnswer(status: number, answer: Answer, model: string): Answer {
  if (answer.kind !== 'whole' || status >= 400) return answer;
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

export const countTokens: ForwardedFrontApi = {
  kind: 'forwarded',
  name: 'count tokens',
  endpoint: 'messages.count_tokens',
  routes: [{ method: 'POST', path: '/v1/messages/count_tokens' }],
  ...ANTHROPIC_SHAPE,

  parse(raw) {
    const { json, bytes } = parseJson(raw);
    const model = requiredModel(json);
    // A count takes the request as it would be sent, less its output budget.
    checkAnthropicMessages(json);
    checkStreamFlag(json);
    return {
      json,
      raw: bytes,
      model,
      stream: false,
      estimatedTokens: promptEstimate(bytes) + completionBudget(json),
      worstCaseOutputTokens: null,
      promptText: () => inputText('messages', json),
    };
  },

  call(body, target) {
    const model = target.upstreamModel;
    if (target.channel.provider !== 'anthropic')
      return {
        local: async () =>
          countTokensAnswer(
            200,
            { kind: 'whole', body: await localTokenCount(body, model) },
            model,
          ),
      };
    const adapter = adapterOf(target.channel);
    return {
      request: toAnthropicChannel('/v1/messages/count_tokens', body, target),
      healthStatus: healthOf(adapter),
      answer: (status, answer) => countTokensAnswer(status, answer, model),
    };
  },
};
