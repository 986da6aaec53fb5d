import { type IncomingHttpHeaders } from 'node:http';
import { type GatewayError } from '@switchyard/contracts';
import { interruptionEvent } from '../proxy/upstream-answer.js';
import { type ErrorReply } from './front-api.js';

// What OpenAI's APIs share, and the edge's APIs in its shape (docs/specification.md): the
// key as `Authorization: Bearer`, OpenAI's error JSON, and its stream error event.

export function bearerCredential(headers: IncomingHttpHeaders): string | undefined {
  return headers.authorization;
}

export function openAIErrorReply(error: GatewayError): ErrorReply {
  return { body: error.toBody() };
}

/** The last event of a stream cut mid-way: an error the OpenAI SDKs raise to the caller. */
export const openAIInterruption = interruptionEvent;

/** The parts of an API in OpenAI's shape. */
export const OPENAI_SHAPE = {
  credential: bearerCredential,
  errorReply: openAIErrorReply,
  interruption: openAIInterruption,
};
