import { type IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '@switchyard/contracts';
import { GeminiFraming, geminiErrorBody } from '@switchyard/providers';
import { type ErrorReply, type FrontRoute, type RequestLine } from '../front-api.js';
import { invalid } from '../request-body.js';

// What Gemini's APIs in front share (docs/providers.md, "Gemini's API in front"): the model
// and method in the URL (`models/{model}:{method}`, under `/v1beta` and `/v1`, as Google's
// SDKs send them), the key as `x-goog-api-key` or `?key=`, and Google's error JSON.

/** Model names as Google spells them: no slash, no colon (the colon starts the method). */
const MODEL = ':model(^[\\w.@-]+)';

/** A method's routes: `POST /v1beta/models/{model}:{method}`, and the same under `/v1`. */
export function geminiRoutes(...methods: string[]): FrontRoute[] {
  return methods.flatMap((method) =>
    ['/v1beta', '/v1'].map((version): FrontRoute => ({
      method: 'POST',
      path: `${version}/models/${MODEL}::${method}`,
    })),
  );
}

/** Gemini's URLs: all of `/v1beta`, and a model's methods under `/v1` (`:foo` included). */
export function geminiClaims(path: string): boolean {
  return path.startsWith('/v1beta/') || /^\/v1\/models\/[^/]*:/.test(path);
}

/** The method a request's URL names (`generateContent`, ...). */
export function methodOf(line: RequestLine | undefined): string {
  const path = line?.url.split('?')[0] ?? '';
  return path.slice(path.lastIndexOf(':') + 1);
}

export function modelOf(line: RequestLine | undefined): string {
  const model = (line?.params as { model?: unknown } | null)?.model;
  if (typeof model !== 'string' || model === '')
    throw invalid('The URL must name a model: models/{model}:{method}.', 'model');
  return model;
}

function queryOf(line: RequestLine | undefined, name: string): string | undefined {
  const value = (line?.query as Record<string, unknown> | null)?.[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `alt=sse` asks for server-sent events; without it a stream is one JSON array. */
export function wantsEvents(line: RequestLine | undefined): boolean {
  return queryOf(line, 'alt') === 'sse';
}

/**
 * Google's SDKs send the key as `x-goog-api-key`, REST callers as `?key=`; both, when they
 * differ, are a caller's mistake Google refuses too. `Authorization: Bearer` works as well.
 */
export function geminiCredential(
  headers: IncomingHttpHeaders,
  line?: RequestLine,
): string | undefined {
  const header = headers['x-goog-api-key'];
  const inHeader = typeof header === 'string' && header !== '' ? header : undefined;
  const inQuery = queryOf(line, 'key');
  if (inHeader && inQuery && inHeader !== inQuery)
    throw new GatewayError(
      'invalid_request',
      'The API key in the x-goog-api-key header and the one in the key query parameter differ; send one.',
      'key',
    );
  const key = inHeader ?? inQuery;
  return key ? `Bearer ${key}` : headers.authorization;
}

/** Its SDKs read errors in Google's shape, `{error: {code, message, status}}`. */
export function geminiErrorReply(error: GatewayError): ErrorReply {
  return {
    contentType: 'application/json; charset=utf-8',
    body: geminiErrorBody(error.status, error.message),
  };
}

/** Every Gemini stream has a translator that ends it in its framing; this is the fallback. */
export function geminiInterruption(reason: string): string {
  return new GeminiFraming(true).error(500, `The upstream stream was interrupted: ${reason}`);
}

/** The parts of an API in Google's shape. */
export const GEMINI_SHAPE = {
  credential: geminiCredential,
  errorReply: geminiErrorReply,
  interruption: geminiInterruption,
  claims: geminiClaims,
};

/** A gemini channel's own route for the method, the model the channel's. */
export function geminiChannelPath(upstreamModel: string, method: string): string {
  return `/v1beta/models/${encodeURIComponent(upstreamModel.replace(/^models\//, ''))}:${method}`;
}

/** A Gemini body's `contents`: a non-empty array of contents, each with its parts. */
export function checkContents(contents: unknown, param = 'contents'): void {
  if (!Array.isArray(contents) || contents.length === 0)
    throw invalid(`'${param}' must be a non-empty array.`, param);
  contents.forEach((content: unknown, index) => {
    const c = content as { role?: unknown; parts?: unknown } | null;
    const where = `${param}[${index}]`;
    if (typeof c !== 'object' || c === null || !Array.isArray(c.parts))
      throw invalid(`'${where}.parts' must be an array of parts.`, `${where}.parts`);
    if (c.role !== undefined && c.role !== 'user' && c.role !== 'model' && c.role !== 'function')
      throw invalid(`'${where}.role' must be 'user' or 'model'.`, `${where}.role`);
    checkParts(c.parts, `${where}.parts`);
  });
}

/** The fields of a part that hold an object when present. */
const PART_OBJECTS = ['inlineData', 'fileData', 'functionCall', 'functionResponse'] as const;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Each part an object, its data and calls objects too: checked here whatever the channel,
 * so that a gemini channel, which gets the body as sent, is never asked what it cannot
 * read.
 */
export function checkParts(parts: unknown[], param: string): void {
  parts.forEach((part, index) => {
    const where = `${param}[${index}]`;
    if (!isObject(part)) throw invalid(`'${where}' must be an object.`, where);
    for (const field of PART_OBJECTS)
      if (part[field] !== undefined && !isObject(part[field]))
        throw invalid(`'${where}.${field}' must be an object.`, `${where}.${field}`);
    if (part.text !== undefined && typeof part.text !== 'string')
      throw invalid(`'${where}.text' must be a string.`, `${where}.text`);
  });
}
