import { type IncomingHttpHeaders } from 'node:http';
import { type GatewayError } from '@switchyard/contracts';
import { anthropicHeaders, messagesErrorBody, messagesErrorEvent } from '@switchyard/providers';
import {
  type ChannelTarget,
  type ErrorReply,
  type ParsedBody,
  type UpstreamRequest,
} from './front-api.js';
import { bodyFor, invalid } from './request-body.js';

// What Anthropic's APIs in front share (docs/providers.md, "Anthropic's API in front"): the
// key as `x-api-key`, Anthropic's error JSON and stream error event, and an anthropic
// channel's request as the client sent it.

/** Anthropic's SDKs send the key as `x-api-key`; `Authorization: Bearer` works as well. */
export function anthropicCredential(headers: IncomingHttpHeaders): string | undefined {
  const key = headers['x-api-key'];
  return typeof key === 'string' && key !== '' ? `Bearer ${key}` : headers.authorization;
}

/** Its SDKs read errors in Anthropic's shape. */
export function anthropicErrorReply(error: GatewayError): ErrorReply {
  return {
    contentType: 'application/json; charset=utf-8',
    body: messagesErrorBody(error.status, error.message),
  };
}

export function anthropicInterruption(reason: string): string {
  return messagesErrorEvent(`The upstream stream was interrupted: ${reason}`);
}

/** Anthropic's SDKs send `anthropic-version` on every request; OpenAI's never do. */
export function isAnthropicCaller(headers: IncomingHttpHeaders): boolean {
  return headers['anthropic-version'] !== undefined;
}

/** The parts of an API in Anthropic's shape. */
export const ANTHROPIC_SHAPE = {
  credential: anthropicCredential,
  errorReply: anthropicErrorReply,
  interruption: anthropicInterruption,
  // Its SDKs read an error's request id (`err.requestID`) from this header.
  requestIdHeader: 'request-id',
};

/**
 * The client's body for an anthropic channel (its model renamed), with the features it
 * opted into (`anthropic-beta`).
 */
export function toAnthropicChannel(
  path: string,
  body: ParsedBody,
  { upstreamModel, secret, settings, clientHeaders }: ChannelTarget,
): UpstreamRequest {
  const headers = anthropicHeaders(secret, settings);
  const beta = clientHeaders['anthropic-beta'];
  if (beta !== undefined) headers['anthropic-beta'] = [beta].flat().join(',');
  return { path, providerPath: true, headers, body: bodyFor(body, upstreamModel) };
}

/**
 * Anthropic's Messages request, less its output budget (a token count takes the request
 * as it would be sent, without one): what every channel needs, as Anthropic's API checks
 * it. Its blocks are the converting channel's to judge (libs/providers).
 */
export function checkAnthropicMessages(json: Record<string, unknown>): void {
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
