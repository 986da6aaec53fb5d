import { GatewayError } from '@switchyard/contracts';
import { type ParsedBody } from './front-api.js';

// Reading a request body, as every front API does: checked just enough to route and meter
// it. Everything else is the upstream's to judge: the body is forwarded as sent.

/** A request that names no output limit may produce this many tokens (docs/architecture.md). */
export const DEFAULT_OUTPUT_TOKENS = 4_096;

export function invalid(message: string, param: string | null): GatewayError {
  return new GatewayError('invalid_request', message, param);
}

/** The body as a JSON object, and its bytes. */
export function parseJson(raw: unknown): { json: Record<string, unknown>; bytes: Buffer } {
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
  return { json: json as Record<string, unknown>, bytes: raw };
}

/** A prompt's tokens, guessed from its size before any tokenizer has read it. */
export function promptEstimate(bytes: Buffer): number {
  return Math.ceil(bytes.length / 4);
}

/** The tokens of a prompt's text, at four characters a token, without a tokenizer. */
export function promptTokensEstimate(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The model a request must name. */
export function requiredModel(json: Record<string, unknown>): string {
  if (typeof json.model !== 'string' || json.model === '')
    throw invalid("'model' is required and must be a string.", 'model');
  return json.model;
}

export function checkStreamFlag(json: Record<string, unknown>): void {
  if (json.stream !== undefined && json.stream !== null && typeof json.stream !== 'boolean')
    throw invalid("'stream' must be a boolean.", 'stream');
}

/** The output limit the request sets itself (0: none), in any of the chat APIs' names. */
export function completionBudget(json: Record<string, unknown>): number {
  const budget = json.max_completion_tokens ?? json.max_tokens ?? json.max_output_tokens;
  return typeof budget === 'number' && Number.isFinite(budget) && budget > 0
    ? Math.floor(budget)
    : 0;
}

/** A chat API's body once checked: its output is what it sets, or the default. */
export function chatBody(
  json: Record<string, unknown>,
  bytes: Buffer,
  model: string,
  stream: boolean,
  promptText: () => string,
): ParsedBody {
  const budget = completionBudget(json);
  // Read once: a converted Anthropic stream estimates its input from it, and metering's
  // record carries it when the upstream reports no usage.
  let text: string | undefined;
  return {
    json,
    raw: bytes,
    model,
    stream,
    estimatedTokens: promptEstimate(bytes) + budget,
    worstCaseOutputTokens: budget || DEFAULT_OUTPUT_TOKENS,
    promptText: () => (text ??= promptText()),
  };
}

/**
 * A JSON body naming another model (a fallback's): its bytes are written again, so that a
 * channel that keeps the name sends the fallback's, not the one asked for.
 */
export function renamedJsonBody(parsed: ParsedBody, model: string): ParsedBody {
  const json = { ...parsed.json, model };
  return { ...parsed, json, raw: Buffer.from(JSON.stringify(json)), model };
}

/** The body for one channel: the bytes as sent, unless the channel renames the model. */
export function bodyFor(parsed: ParsedBody, upstreamModel: string): Buffer {
  if (upstreamModel === parsed.model && parsed.json.model !== undefined) return parsed.raw;
  return Buffer.from(JSON.stringify({ ...parsed.json, model: upstreamModel }));
}
