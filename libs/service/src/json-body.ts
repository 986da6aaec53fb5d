import { ApiError } from '@switchyard/contracts';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';

// JSON bodies are checked for their structure once, right after parsing and before any
// handler, pipe or validator touches them: every check below is one pass over the parsed
// value, so a hostile body costs about what parsing it did (docs/architecture.md, "Bad
// input").

/** Deepest nesting any API body needs is 4; class-transformer recurses once per level. */
export const MAX_JSON_DEPTH = 32;
/** The largest array any DTO declares (a price table of 10,000 rows). */
export const MAX_JSON_ARRAY_ITEMS = 10_000;
/** More keys than any DTO or mapping declares (model mappings: 500). */
export const MAX_JSON_OBJECT_KEYS = 1_000;

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a text cannot be stored or compared as sent, or null when it can. */
export function unstorableText(text: string): string | null {
  // Postgres refuses NUL in text; a lone surrogate is no character at all (not UTF-8).
  if (text.includes('\u0000')) return 'must not contain NUL characters (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'must be valid Unicode (it has a lone surrogate)';
  return null;
}

function refuse(field: string, message: string): ApiError {
  return new ApiError('validation_failed', `Invalid ${field}: ${field} ${message}`, [
    { field, message: `${field} ${message}` },
  ]);
}

function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

/**
 * Throws a 400 naming the first offending field when a parsed body is not an object or an
 * array, nests deeper than `MAX_JSON_DEPTH`, has an array or object larger than the
 * limits above, or holds a string (key or value) Postgres could not store. Iterative, so
 * 20,000 levels of nesting cost a loop, not a stack overflow.
 */
export function assertSaneJson(value: unknown): void {
  if (typeof value !== 'object' || value === null) {
    const message = 'must be a JSON object';
    throw new ApiError('validation_failed', `The request body ${message}`, [
      { field: 'body', message: `body ${message}` },
    ]);
  }
  const pending: { value: unknown; path: string; depth: number }[] = [
    { value, path: '', depth: 1 },
  ];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: node, path, depth } = next;
    const field = path === '' ? 'body' : path;
    if (typeof node === 'string') {
      const problem = unstorableText(node);
      if (problem) throw refuse(field, problem);
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    if (depth > MAX_JSON_DEPTH) {
      throw refuse(field, `nests deeper than ${MAX_JSON_DEPTH} levels`);
    }
    if (Array.isArray(node)) {
      if (node.length > MAX_JSON_ARRAY_ITEMS) {
        throw refuse(field, `must not have more than ${MAX_JSON_ARRAY_ITEMS} items`);
      }
      for (let index = 0; index < node.length; index += 1) {
        pending.push({ value: node[index], path: childPath(path, index), depth: depth + 1 });
      }
      continue;
    }
    const keys = Object.keys(node);
    if (keys.length > MAX_JSON_OBJECT_KEYS) {
      throw refuse(field, `must not have more than ${MAX_JSON_OBJECT_KEYS} keys`);
    }
    for (const key of keys) {
      const problem = unstorableText(key);
      if (problem) throw refuse(field, `has a key that ${problem}`);
      // Keys that would reach an object's prototype once merged (as Fastify's parser refuses).
      if (key === '__proto__' || key === 'constructor') {
        throw refuse(childPath(path, key), 'is not an accepted key');
      }
      pending.push({
        value: (node as Record<string, unknown>)[key],
        path: childPath(path, key),
        depth: depth + 1,
      });
    }
  }
}

/** Parses a JSON body and applies `assertSaneJson`; a refusal is thrown as an `ApiError`. */
export function parseSaneJson(body: Buffer): unknown {
  const text = body.toString('utf8');
  // An empty body is no body (clients send the JSON content type on body-less actions such
  // as `POST /api/channels/1/disable`); a route that expects one refuses it in its DTO pipe.
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ApiError(
      'invalid_json',
      `The request body is not valid JSON: ${(error as Error).message}`,
    );
  }
  assertSaneJson(parsed);
  return parsed;
}

/**
 * Takes the place of the framework's JSON parser (same limit); its refusals reach the
 * app's exception filter like any other `ApiError`.
 */
export function parseJsonBodies(app: NestFastifyApplication, bodyLimit: number): void {
  app.useBodyParser('application/json', { bodyLimit }, (_request, body, done) => {
    try {
      done(null, parseSaneJson(body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
