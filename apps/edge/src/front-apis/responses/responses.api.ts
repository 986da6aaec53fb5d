import {
  ChatToResponsesStream,
  ResponsesStreamReader,
  chatAnswerToResponse,
  inputText,
  responseEcho,
  responsesPassthroughUsage,
  responsesToChatRequest,
  type AnswerContext,
  type ChatAdapter,
  type TranslatedAnswer,
} from '@switchyard/providers';
import { type Answer } from '../../proxy/upstream-answer.js';
import {
  adapterOf,
  answerContext,
  convertAnswer,
  converted,
  healthOf,
  passedThrough,
  readAnswer,
  summaryOf,
  translatedAnswer,
} from '../conversion.js';
import { type ForwardedFrontApi, type ParsedBody } from '../front-api.js';
import { OPENAI_SHAPE } from '../openai-shape.js';
import {
  chatBody,
  checkStreamFlag,
  invalid,
  parseJson,
  renamedJsonBody,
  requiredModel,
} from '../request-body.js';

// OpenAI's Responses API, for agents built on it (docs/providers.md, "OpenAI's Responses
// API in front"): an openai channel gets the client's bytes, and its answer is read for its
// usage as it passes; every other channel gets it as a chat completion, converted again by
// its adapter, and its answer is converted back to a Response.

/**
 * What every channel needs. `input` may be left out only where OpenAI keeps the conversation
 * (`previous_response_id`, `conversation`, a stored `prompt`), which converted channels refuse.
 */
function checkResponses(json: Record<string, unknown>): void {
  const input = json.input;
  if (Array.isArray(input)) {
    input.forEach((item: unknown, index) => {
      if (typeof item !== 'object' || item === null || Array.isArray(item))
        throw invalid(`'input[${index}]' must be an object.`, `input[${index}]`);
    });
  } else if (typeof input !== 'string' && input !== undefined && input !== null) {
    throw invalid("'input' must be a string or an array of items.", 'input');
  } else if (
    input == null &&
    json.previous_response_id == null &&
    json.conversation == null &&
    json.prompt == null
  ) {
    throw invalid("'input' is required.", 'input');
  }
  if (json.tools !== undefined && json.tools !== null && !Array.isArray(json.tools))
    throw invalid("'tools' must be an array.", 'tools');
}

/**
 * The answer as OpenAI's Responses: an openai channel's as it came (its usage read), any
 * other's converted from the chat completion its adapter gave.
 */
function responsesAnswer(
  adapter: ChatAdapter | null,
  status: number,
  answer: Answer,
  context: AnswerContext,
  body: ParsedBody,
): Answer {
  if (!adapter) {
    if (answer.kind === 'whole') {
      if (status >= 400) return answer;
      // A body that is no Response is left unread: the failover step then fails it over.
      let read: TranslatedAnswer & { id: string | null };
      try {
        read = responsesPassthroughUsage(answer.body, context);
      } catch {
        return answer;
      }
      // OpenAI keeps the Response unless told not to: its follow-ups come back here.
      const stored = read.id !== null && body.json.store !== false;
      return { ...answer, summary: summaryOf(read), ...(stored ? { storedId: read.id! } : {}) };
    }
    const reader = new ResponsesStreamReader();
    const read = readAnswer(answer, reader);
    if (read.kind === 'stream' && body.json.store !== false)
      read.storedId = () => reader.responseId;
    return read;
  }
  // The converted request asked for the stream's usage chunk: the adapter must give it.
  const chat = convertAnswer(adapter, status, answer, { ...context, includeUsage: true });
  const echo = responseEcho(body.json);
  if (chat.kind === 'whole') {
    // The adapter's error is in OpenAI's shape already, as this API's errors are.
    if (status >= 400) return chat;
    const response = chatAnswerToResponse(chat.body, context, echo);
    return { kind: 'whole', body: response.body, summary: summaryOf(response) };
  }
  return translatedAnswer(chat, new ChatToResponsesStream(context, echo));
}

export const responses: ForwardedFrontApi = {
  kind: 'forwarded',
  name: 'responses',
  endpoint: 'responses',
  routes: [{ method: 'POST', path: '/v1/responses' }],
  ...OPENAI_SHAPE,
  renamed: renamedJsonBody,

  parse(raw) {
    const { json, bytes } = parseJson(raw);
    const model = requiredModel(json);
    checkResponses(json);
    checkStreamFlag(json);
    return chatBody(json, bytes, model, json.stream === true, () => inputText('responses', json));
  },

  call(body, target) {
    const adapter = adapterOf(target.channel);
    const { upstreamModel, secret, settings } = target;
    return {
      request: adapter
        ? converted(
            adapter.chatRequest(
              { body: responsesToChatRequest(body.json), upstreamModel, secret, settings },
              body.stream,
            ),
          )
        : passedThrough(body, target, '/responses'),
      healthStatus: healthOf(adapter),
      answer: (status, answer) =>
        responsesAnswer(adapter, status, answer, answerContext(body, upstreamModel), body),
    };
  },
};
