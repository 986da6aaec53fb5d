import { type ChatMessage } from '@switchyard/contracts';
import { inputText } from '@switchyard/providers';
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
  chatBody,
  checkStreamFlag,
  invalid,
  parseJson,
  renamedJsonBody,
  requiredModel,
} from '../request-body.js';

// OpenAI's chat completions, the API every provider adapter converts to and from
// (docs/providers.md): an openai channel gets the client's bytes, any other its adapter's
// request.

function checkMessages(messages: unknown): ChatMessage[] {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalid("'messages' must be a non-empty array.", 'messages');
  }
  messages.forEach((message: unknown, index) => {
    const m = message as Partial<ChatMessage> | null;
    if (typeof m !== 'object' || m === null || Array.isArray(m))
      throw invalid(`'messages[${index}]' must be an object.`, `messages[${index}]`);
    if (typeof m.role !== 'string')
      throw invalid(`'messages[${index}].role' must be a string.`, `messages[${index}].role`);
    const content = m.content;
    const partsOk =
      Array.isArray(content) &&
      content.every(
        (p) =>
          typeof p === 'object' && p !== null && typeof (p as { type?: unknown }).type === 'string',
      );
    if (content !== undefined && content !== null && typeof content !== 'string' && !partsOk) {
      throw invalid(
        `'messages[${index}].content' must be a string or an array of content parts with a 'type'.`,
        `messages[${index}].content`,
      );
    }
  });
  return messages as ChatMessage[];
}

export const chatCompletions: ForwardedFrontApi = {
  kind: 'forwarded',
  name: 'chat completions',
  endpoint: 'chat.completions',
  routes: [{ method: 'POST', path: '/v1/chat/completions' }],
  ...OPENAI_SHAPE,
  renamed: renamedJsonBody,

  parse(raw) {
    const { json, bytes } = parseJson(raw);
    const model = requiredModel(json);
    checkMessages(json.messages);
    checkStreamFlag(json);
    if (
      json.stream_options !== undefined &&
      json.stream_options !== null &&
      (typeof json.stream_options !== 'object' || Array.isArray(json.stream_options))
    ) {
      throw invalid("'stream_options' must be an object.", 'stream_options');
    }
    return chatBody(json, bytes, model, json.stream === true, () =>
      inputText('chat.completions', json),
    );
  },

  call(body, target) {
    const adapter = adapterOf(target.channel);
    const { upstreamModel, secret, settings } = target;
    return {
      request: adapter
        ? converted(
            adapter.chatRequest({ body: body.json, upstreamModel, secret, settings }, body.stream),
          )
        : passedThrough(body, target, '/chat/completions'),
      healthStatus: healthOf(adapter),
      answer: (status, answer) =>
        adapter
          ? convertAnswer(adapter, status, answer, answerContext(body, upstreamModel))
          : answer,
    };
  },
};
