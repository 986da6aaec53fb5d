import { GatewayError, type ChatMessage, type GatewayEndpoint } from '@switchyard/contracts';
import { inputText } from '@switchyard/providers';

// What the edge needs to know of a request body, checked just enough to route and meter
// it. Everything else is the upstream's to judge: the body is forwarded as sent.

export interface ParsedBody {
  json: Record<string, unknown>;
  raw: Buffer;
  model: string;
  stream: boolean;
  /** Tokens the request may use: prompt estimate plus its completion budget. */
  estimatedTokens: number;
  /**
   * The prompt as text, for the tokenizer when the upstream reports no usage: for the chat
   * APIs, all a model reads of it (libs/providers' input-texts.ts).
   */
  promptText(): string;
}

/** OpenAI's default when an image request names no model. */
const DEFAULT_IMAGE_MODEL = 'dall-e-2';

function invalid(message: string, param: string | null): GatewayError {
  return new GatewayError('invalid_request', message, param);
}

function parseJson(raw: unknown): Record<string, unknown> {
  if (!Buffer.isBuffer(raw) || raw.length === 0) {
    throw new GatewayError('invalid_json', 'The request body is empty; a JSON object is expected.');
  }
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw new GatewayError(
      'invalid_json',
      `The request body is not valid JSON: ${(error as Error).message}`,
    );
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw invalid('The request body must be a JSON object.', null);
  }
  return json as Record<string, unknown>;
}

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

/**
 * Anthropic's Messages request (docs/providers.md, "Anthropic's API in front"): what every
 * channel needs, as Anthropic's API checks it. Its blocks are the converting channel's to
 * judge (libs/providers).
 */
function checkAnthropicMessages(json: Record<string, unknown>, counting = false): void {
  // A token count takes the request as it would be sent, less its output budget.
  if (
    !counting &&
    (typeof json.max_tokens !== 'number' ||
      !Number.isInteger(json.max_tokens) ||
      json.max_tokens < 1)
  )
    throw invalid("'max_tokens' is required and must be a positive integer.", 'max_tokens');
  const read = (content: unknown, param: string): void => {
    if (typeof content === 'string') return;
    const blocks = Array.isArray(content) ? (content as unknown[]) : null;
    const typed = blocks?.every(
      (b) =>
        typeof b === 'object' && b !== null && typeof (b as { type?: unknown }).type === 'string',
    );
    if (!typed)
      throw invalid(
        `'${param}' must be a string or an array of content blocks with a 'type'.`,
        param,
      );
  };
  if (json.system !== undefined && json.system !== null) read(json.system, 'system');
  const messages = json.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    throw invalid("'messages' must be a non-empty array.", 'messages');
  messages.forEach((message: unknown, index) => {
    const m = message as { role?: unknown; content?: unknown } | null;
    if (m?.role !== 'user' && m?.role !== 'assistant')
      throw invalid(
        `'messages[${index}].role' must be 'user' or 'assistant'.`,
        `messages[${index}].role`,
      );
    read(m.content, `messages[${index}].content`);
  });
  if (json.tools !== undefined && json.tools !== null && !Array.isArray(json.tools))
    throw invalid("'tools' must be an array.", 'tools');
}

/**
 * OpenAI's Responses request (docs/providers.md, "OpenAI's Responses API in front"): what
 * every channel needs. `input` may be left out only where OpenAI keeps the conversation
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

/** The output limit the request sets itself (0: none), in any of the three APIs' names. */
export function completionBudget(json: Record<string, unknown>): number {
  const budget = json.max_completion_tokens ?? json.max_tokens ?? json.max_output_tokens;
  return typeof budget === 'number' && Number.isFinite(budget) && budget > 0
    ? Math.floor(budget)
    : 0;
}

export function parseRequestBody(endpoint: GatewayEndpoint, raw: unknown): ParsedBody {
  const json = parseJson(raw);
  const bytes = raw as Buffer;
  const promptEstimate = Math.ceil(bytes.length / 4);

  if (endpoint === 'chat.completions') {
    if (typeof json.model !== 'string' || json.model === '')
      throw invalid("'model' is required and must be a string.", 'model');
    checkMessages(json.messages);
    if (json.stream !== undefined && json.stream !== null && typeof json.stream !== 'boolean') {
      throw invalid("'stream' must be a boolean.", 'stream');
    }
    if (
      json.stream_options !== undefined &&
      json.stream_options !== null &&
      (typeof json.stream_options !== 'object' || Array.isArray(json.stream_options))
    ) {
      throw invalid("'stream_options' must be an object.", 'stream_options');
    }
    return {
      json,
      raw: bytes,
      model: json.model,
      stream: json.stream === true,
      estimatedTokens: promptEstimate + completionBudget(json),
      promptText: () => inputText('chat.completions', json),
    };
  }

  if (endpoint === 'messages' || endpoint === 'messages.count_tokens' || endpoint === 'responses') {
    if (typeof json.model !== 'string' || json.model === '')
      throw invalid("'model' is required and must be a string.", 'model');
    if (endpoint === 'responses') checkResponses(json);
    else checkAnthropicMessages(json, endpoint === 'messages.count_tokens');
    if (json.stream !== undefined && json.stream !== null && typeof json.stream !== 'boolean')
      throw invalid("'stream' must be a boolean.", 'stream');
    return {
      json,
      raw: bytes,
      model: json.model,
      stream: endpoint !== 'messages.count_tokens' && json.stream === true,
      estimatedTokens: promptEstimate + completionBudget(json),
      promptText: () => inputText(endpoint === 'responses' ? 'responses' : 'messages', json),
    };
  }

  if (endpoint === 'embeddings') {
    if (typeof json.model !== 'string' || json.model === '')
      throw invalid("'model' is required and must be a string.", 'model');
    const input = json.input;
    const ok = typeof input === 'string' || (Array.isArray(input) && input.length > 0);
    if (!ok) throw invalid("'input' must be a string or a non-empty array.", 'input');
    return {
      json,
      raw: bytes,
      model: json.model,
      stream: false,
      estimatedTokens: promptEstimate,
      promptText: () =>
        Array.isArray(input)
          ? input.map((i) => (typeof i === 'string' ? i : '')).join('\n')
          : String(input),
    };
  }

  if (json.model !== undefined && (typeof json.model !== 'string' || json.model === '')) {
    throw invalid("'model' must be a string.", 'model');
  }
  if (typeof json.prompt !== 'string' || json.prompt.trim() === '')
    throw invalid("'prompt' is required and must be a string.", 'prompt');
  const prompt = json.prompt;
  return {
    json,
    raw: bytes,
    model: (json.model as string | undefined) ?? DEFAULT_IMAGE_MODEL,
    stream: false,
    estimatedTokens: promptEstimate,
    promptText: () => prompt,
  };
}

/** The body for one channel: the bytes as sent, unless the channel renames the model. */
export function bodyFor(parsed: ParsedBody, upstreamModel: string): Buffer {
  if (upstreamModel === parsed.model && parsed.json.model !== undefined) return parsed.raw;
  return Buffer.from(JSON.stringify({ ...parsed.json, model: upstreamModel }));
}
