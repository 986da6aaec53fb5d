import { GatewayError, type ChatMessage } from '@switchyard/contracts';

// What every converting adapter reads the same way from OpenAI's chat-completion request.

export function invalid(message: string, param: string): GatewayError {
  return new GatewayError('invalid_request', message, param);
}

/** Refuses what no converted provider can express: several choices, legacy function calling. */
export function refuseUnconvertible(body: Record<string, unknown>): void {
  if (typeof body.n === 'number' && body.n > 1)
    throw invalid('This model returns one choice per request (`n` must be 1).', 'n');
  if (body.functions !== undefined || body.function_call !== undefined)
    throw invalid(
      '`functions` and `function_call` are deprecated; send `tools` and `tool_choice`.',
      'functions',
    );
}

const DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,(.*)$/is;

/** An image given as a base64 data URL, or null when the URL is something else. */
export function dataUrlImage(url: string): { mediaType: string; data: string } | null {
  const match = DATA_URL.exec(url);
  return match ? { mediaType: match[1]!.toLowerCase(), data: match[2]! } : null;
}

/** The URL of an `image_url` part (given as an object or, by older clients, a string). */
export function imageUrlOf(part: unknown, param: string): string {
  const image = (part as { image_url?: { url?: unknown } | string }).image_url;
  const url = typeof image === 'string' ? image : image?.url;
  if (typeof url !== 'string') throw invalid('`image_url.url` must be a string.', param);
  return url;
}

export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? [])
    .map((part) => {
      const text = part.type === 'text' ? (part as { text?: unknown }).text : undefined;
      return typeof text === 'string' ? text : '';
    })
    .join('');
}

/** A tool call's arguments as the object providers want; empty arguments are `{}`. */
export function toolArguments(
  call: NonNullable<ChatMessage['tool_calls']>[number],
  param: string,
): Record<string, unknown> {
  let input: unknown = {};
  const args = call.function?.arguments;
  if (typeof args === 'string' && args.trim() !== '') {
    try {
      input = JSON.parse(args);
    } catch {
      throw invalid('Tool call arguments must be a JSON object.', `${param}.function.arguments`);
    }
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw invalid('Tool call arguments must be a JSON object.', `${param}.function.arguments`);
  return input as Record<string, unknown>;
}

/** The function tools of a request, each with its name; anything else is a 400. */
export function functionTools(
  value: unknown,
): { name: string; description?: string; parameters?: unknown }[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  return value.map((tool: { type?: string; function?: Record<string, unknown> }, index) => {
    if (tool?.type !== 'function' || typeof tool.function?.name !== 'string')
      throw invalid(
        'Only function tools with a name can be sent to this model.',
        `tools[${index}]`,
      );
    const { name, description, parameters } = tool.function;
    return {
      name,
      ...(typeof description === 'string' ? { description } : {}),
      ...(parameters !== undefined && parameters !== null ? { parameters } : {}),
    };
  });
}

export function stopSequences(stop: unknown): string[] | undefined {
  if (typeof stop === 'string') return [stop];
  if (Array.isArray(stop) && stop.length > 0) return stop.filter((s) => typeof s === 'string');
  return undefined;
}

/** `max_completion_tokens`, or the older `max_tokens`, when positive. */
export function completionBudget(body: Record<string, unknown>): number | undefined {
  const budget = body.max_completion_tokens ?? body.max_tokens;
  return typeof budget === 'number' && budget > 0 ? budget : undefined;
}
