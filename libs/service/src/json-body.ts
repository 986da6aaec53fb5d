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

interface Level {
  object: boolean;
  /** Keys of an object (its colons), or separators of an array (its commas). */
  count: number;
  /** An object's current key, as indices of its quoted text in the body. */
  keyStart: number;
  keyEnd: number;
  /** Whether the next string of an object is a key. */
  expectKey: boolean;
}

/**
 * Checks a body's shape on its bytes, before `JSON.parse` builds anything: nesting, keys
 * per object and items per array within the limits above.
 * `JSON.parse` alone of one object with 50,000 keys holds the event loop for about 80 ms
 * (more on a busy machine), and walking it as many again; this scan is one pass over the
 * bytes with no allocation per key, so a hostile body costs what reading it costs
 * (docs/reliability.md, "Defects of the edges of the services"). What it cannot see
 * (texts Postgres refuses, keys that reach a prototype) `assertSaneJson` checks after.
 */
export function assertJsonShape(body: Buffer): void {
  const levels: Level[] = [];
  let inString = false;
  let stringStart = 0;
  const pathOf = (depth: number): string => {
    let path = '';
    for (let index = 0; index < depth; index += 1) {
      const level = levels[index]!;
      path = level.object
        ? childPath(
            path,
            JSON.parse(body.toString('utf8', level.keyStart, level.keyEnd + 1)) as string,
          )
        : childPath(path, level.count);
    }
    return path === '' ? 'body' : path;
  };
  for (let index = 0; index < body.length; index += 1) {
    const byte = body[index]!;
    if (inString) {
      if (byte === 0x5c) index += 1;
      else if (byte === 0x22) {
        inString = false;
        const level = levels.at(-1);
        if (level?.object && level.expectKey) {
          level.keyStart = stringStart;
          level.keyEnd = index;
          level.expectKey = false;
        }
      }
      continue;
    }
    switch (byte) {
      case 0x22: // "
        inString = true;
        stringStart = index;
        break;
      case 0x7b: // {
      case 0x5b: {
        // [
        if (levels.length + 1 > MAX_JSON_DEPTH) {
          throw refuse(pathOf(levels.length), `nests deeper than ${MAX_JSON_DEPTH} levels`);
        }
        levels.push({ object: byte === 0x7b, count: 0, keyStart: 0, keyEnd: 0, expectKey: true });
        break;
      }
      case 0x7d: // }
      case 0x5d: // ]
        levels.pop();
        break;
      case 0x3a: {
        // :
        const level = levels.at(-1);
        if (level?.object) {
          level.count += 1;
          if (level.count > MAX_JSON_OBJECT_KEYS) {
            throw refuse(
              pathOf(levels.length - 1),
              `must not have more than ${MAX_JSON_OBJECT_KEYS} keys`,
            );
          }
        }
        break;
      }
      case 0x2c: {
        // ,
        const level = levels.at(-1);
        if (level?.object) level.expectKey = true;
        else if (level) {
          level.count += 1;
          if (level.count + 1 > MAX_JSON_ARRAY_ITEMS) {
            throw refuse(
              pathOf(levels.length - 1),
              `must not have more than ${MAX_JSON_ARRAY_ITEMS} items`,
            );
          }
        }
        break;
      }
      default:
        break;
    }
  }
}

/** Parses a JSON body and applies `assertSaneJson`; a refusal is thrown as an `ApiError`. */
export function parseSaneJson(body: Buffer): unknown {
  const text = body.toString('utf8');
  // An empty body is no body (clients send the JSON content type on body-less actions such
  // as `POST /api/channels/1/disable`); a route that expects one refuses it in its DTO pipe.
  if (text.trim() === '') return undefined;
  // Only for text that looks like JSON at all: malformed text keeps the parser's message.
  if (/^\s*[{[]/.test(text)) assertJsonShape(body);
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
      done(null, parseSaneJson(body));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
