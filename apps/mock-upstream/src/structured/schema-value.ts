import { createHash } from 'node:crypto';

// A value valid against a JSON Schema, for the answers a real model shapes to one: chat
// completions' `response_format`, the Responses API's `text.format`, Anthropic's and
// Bedrock's tool input, Gemini's `responseSchema`/`responseJsonSchema` and function
// arguments. It is a function of the schema alone, so a test can predict it: a string
// property is "example <name>" (what the mock has always put in tool arguments), a number
// 1 (or the nearest value its bounds allow), a boolean true, an enum its first value.
//
// It covers what structured-output schemas use (the subset OpenAI's strict mode accepts,
// and Gemini's OpenAPI flavour with upper-case types and `nullable`); of the rest, a
// `pattern` is met only when one of a few candidate strings matches it, and `not`,
// `if`/`then`, `contains` and `patternProperties` are not read.

type Schema = Record<string, unknown>;

/** How deep `$ref`s are followed: a recursive schema ends its recursion with null there. */
const MAX_DEPTH = 12;

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function numberOr(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** `#`, `#/$defs/x`, `#/definitions/x` or any other JSON pointer into the root schema. */
function resolveRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    node = isObject(node) || Array.isArray(node) ? (node as Schema)[key] : undefined;
  }
  return node;
}

/** The schema's type, lower-cased (Gemini writes `OBJECT`), the first non-null of a list. */
function typeOf(schema: Schema): string | undefined {
  const type = schema.type;
  if (typeof type === 'string') return type.toLowerCase();
  if (Array.isArray(type)) {
    const types = type.filter((t): t is string => typeof t === 'string');
    return (types.find((t) => t.toLowerCase() !== 'null') ?? types[0])?.toLowerCase();
  }
  if (isObject(schema.properties) || Array.isArray(schema.required)) return 'object';
  if (schema.items !== undefined || Array.isArray(schema.prefixItems)) return 'array';
  if (typeof schema.format === 'string' || schema.minLength !== undefined) return 'string';
  if (schema.minimum !== undefined || schema.maximum !== undefined) return 'number';
  return undefined;
}

/** `allOf` as one schema: the branches' properties and required names together. */
function mergeAll(schema: Schema, branches: unknown[]): Schema {
  const merged: Schema = { ...schema };
  delete merged.allOf;
  const properties: Schema = isObject(schema.properties) ? { ...schema.properties } : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  for (const branch of branches) {
    if (!isObject(branch)) continue;
    for (const [key, value] of Object.entries(branch)) {
      if (key === 'properties' && isObject(value)) Object.assign(properties, value);
      else if (key === 'required' && Array.isArray(value))
        for (const name of value) required.add(String(name));
      else if (!(key in merged)) merged[key] = value;
    }
  }
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.size > 0) merged.required = [...required];
  return merged;
}

function stableUuid(name: string, index: number): string {
  const hex = createHash('sha256').update(`${name}:${index}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const FORMATS: Record<string, (name: string, index: number) => string> = {
  'date-time': (_, i) => `2024-01-${String(1 + (i % 28)).padStart(2, '0')}T12:00:00Z`,
  date: (_, i) => `2024-01-${String(1 + (i % 28)).padStart(2, '0')}`,
  time: () => '12:00:00Z',
  duration: (_, i) => `P${1 + i}D`,
  email: (_, i) => (i === 0 ? 'user@example.com' : `user${i + 1}@example.com`),
  'idn-email': (_, i) => (i === 0 ? 'user@example.com' : `user${i + 1}@example.com`),
  hostname: (_, i) => (i === 0 ? 'example.com' : `host${i + 1}.example.com`),
  'idn-hostname': (_, i) => (i === 0 ? 'example.com' : `host${i + 1}.example.com`),
  ipv4: (_, i) => `192.0.2.${1 + (i % 254)}`,
  ipv6: (_, i) => `2001:db8::${(1 + i).toString(16)}`,
  uri: (name, i) => `https://example.com/${encodeURIComponent(name)}${i ? `/${i + 1}` : ''}`,
  url: (name, i) => `https://example.com/${encodeURIComponent(name)}${i ? `/${i + 1}` : ''}`,
  'uri-reference': (name, i) => `/${encodeURIComponent(name)}${i ? `/${i + 1}` : ''}`,
  iri: (name, i) => `https://example.com/${encodeURIComponent(name)}${i ? `/${i + 1}` : ''}`,
  'iri-reference': (name, i) => `/${encodeURIComponent(name)}${i ? `/${i + 1}` : ''}`,
  'uri-template': (name) => `https://example.com/{${name.replace(/\W/g, '') || 'id'}}`,
  'json-pointer': (name) => `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`,
  'relative-json-pointer': () => '0',
  regex: () => '^.*$',
  uuid: stableUuid,
};

function exampleString(schema: Schema, name: string, index: number): string {
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  let text = format ? format(name, index) : `example ${name}${index > 0 ? ` ${index + 1}` : ''}`;
  if (typeof schema.pattern === 'string') {
    let pattern: RegExp | undefined;
    try {
      pattern = new RegExp(schema.pattern, 'u');
    } catch {
      pattern = undefined;
    }
    if (pattern && !pattern.test(text)) {
      const candidates = [name, 'example', 'a', 'A', '0', 'abc', 'ABC', '123', 'a1', 'A1', ''];
      text = candidates.find((candidate) => pattern.test(candidate)) ?? text;
    }
  }
  const min = numberOr(schema.minLength) ?? 0;
  const max = numberOr(schema.maxLength);
  // Lengths count code points, as JSON Schema's do.
  const chars = [...text];
  while (chars.length < min) chars.push('x');
  return (max !== undefined ? chars.slice(0, max) : chars).join('');
}

function exampleNumber(schema: Schema, integer: boolean, index: number): number {
  const minimum = numberOr(schema.minimum);
  const maximum = numberOr(schema.maximum);
  // Draft 4 writes exclusive bounds as booleans beside minimum/maximum; later drafts as numbers.
  const exclusiveMin =
    numberOr(schema.exclusiveMinimum) ?? (schema.exclusiveMinimum === true ? minimum : undefined);
  const exclusiveMax =
    numberOr(schema.exclusiveMaximum) ?? (schema.exclusiveMaximum === true ? maximum : undefined);
  let low = exclusiveMin === undefined ? minimum : undefined;
  let high = exclusiveMax === undefined ? maximum : undefined;
  if (exclusiveMin !== undefined) low = integer ? Math.floor(exclusiveMin) + 1 : undefined;
  if (exclusiveMax !== undefined) high = integer ? Math.ceil(exclusiveMax) - 1 : undefined;
  if (integer) {
    if (low !== undefined) low = Math.ceil(low);
    if (high !== undefined) high = Math.floor(high);
  }
  let value = 1 + index;
  if (low !== undefined && value < low) value = low + index;
  if (high !== undefined && value > high) value = high;
  // Strictly between exclusive bounds of a number: halfway, or one step inside.
  if (!integer && exclusiveMin !== undefined && value <= exclusiveMin)
    value = exclusiveMax !== undefined ? (exclusiveMin + exclusiveMax) / 2 : exclusiveMin + 1;
  if (!integer && exclusiveMax !== undefined && value >= exclusiveMax)
    value = exclusiveMin !== undefined ? (exclusiveMin + exclusiveMax) / 2 : exclusiveMax - 1;
  const step = numberOr(schema.multipleOf);
  if (step !== undefined && step > 0) {
    value = Math.ceil(value / step) * step;
    const top = high ?? exclusiveMax;
    if (top !== undefined && (value > top || (value === exclusiveMax && high === undefined)))
      value = Math.floor(top / step) * step;
    // Floating steps (0.1) leave dust: round to the step's own decimals.
    const decimals = (String(step).split('.')[1] ?? '').length;
    value = Number(value.toFixed(decimals));
  }
  return integer ? Math.round(value) : value;
}

class Generator {
  constructor(private readonly root: unknown) {}

  value(schema: unknown, name: string, index: number, depth: number): unknown {
    if (schema === true || schema === undefined) return `example ${name}`;
    if (!isObject(schema) || depth > MAX_DEPTH) return null;
    if (typeof schema.$ref === 'string') {
      const target = resolveRef(this.root, schema.$ref);
      const { $ref: _ref, ...siblings } = schema;
      const merged = isObject(target) ? { ...target, ...siblings } : siblings;
      return this.value(merged, name, index, depth + 1);
    }
    if ('const' in schema) return schema.const;
    if (Array.isArray(schema.enum) && schema.enum.length > 0)
      return schema.enum[index % schema.enum.length];
    if (Array.isArray(schema.allOf))
      return this.value(mergeAll(schema, schema.allOf), name, index, depth + 1);
    for (const key of ['anyOf', 'oneOf'] as const) {
      const branches = schema[key];
      if (Array.isArray(branches) && branches.length > 0) {
        const { [key]: _branches, ...rest } = schema;
        const branch: unknown = branches[0];
        return this.value(isObject(branch) ? { ...rest, ...branch } : branch, name, index, depth);
      }
    }
    switch (typeOf(schema)) {
      case 'object':
        return this.object(schema, depth);
      case 'array':
        return this.array(schema, name, depth);
      case 'integer':
        return exampleNumber(schema, true, index);
      case 'number':
        return exampleNumber(schema, false, index);
      case 'boolean':
        return true;
      case 'null':
        return null;
      default:
        return exampleString(schema, name, index);
    }
  }

  private object(schema: Schema, depth: number): Record<string, unknown> {
    const properties = isObject(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required)
      ? schema.required.filter((n): n is string => typeof n === 'string')
      : Object.keys(properties);
    const names = [...new Set(required)];
    // Enough names for minProperties: the optional ones first, then made-up extra ones.
    const minimum = numberOr(schema.minProperties) ?? 0;
    for (const name of Object.keys(properties)) {
      if (names.length >= minimum) break;
      if (!names.includes(name)) names.push(name);
    }
    const extra = schema.additionalProperties;
    for (let n = 1; names.length < minimum && extra !== false; n += 1)
      if (!names.includes(`extra${n}`)) names.push(`extra${n}`);
    const result: Record<string, unknown> = {};
    for (const name of names) {
      const property = name in properties ? properties[name] : isObject(extra) ? extra : true;
      result[name] = this.value(property, name, 0, depth + 1);
    }
    return result;
  }

  private array(schema: Schema, name: string, depth: number): unknown[] {
    // `prefixItems` (2020-12), or `items` as a list (draft 7): a tuple, one value a place.
    const tuple = Array.isArray(schema.prefixItems)
      ? schema.prefixItems
      : Array.isArray(schema.items)
        ? schema.items
        : [];
    const rest: unknown = Array.isArray(schema.items)
      ? schema.additionalItems
      : Array.isArray(schema.prefixItems)
        ? schema.items
        : schema.items;
    const minimum = numberOr(schema.minItems) ?? 0;
    const maximum = numberOr(schema.maxItems);
    let length = Math.max(minimum, tuple.length, rest === false ? 0 : 1);
    if (maximum !== undefined) length = Math.min(length, maximum);
    if (rest === false) length = Math.min(length, tuple.length);
    const singular = name.endsWith('s') ? name.slice(0, -1) : name;
    return Array.from({ length }, (_, i) =>
      i < tuple.length
        ? this.value(tuple[i], singular, 0, depth + 1)
        : // Each item its own value, so `uniqueItems` holds.
          this.value(rest ?? true, singular, i - tuple.length, depth + 1),
    );
  }
}

/** A value valid against `schema` (a JSON Schema, or Gemini's OpenAPI-style schema). */
export function schemaValue(schema: unknown, name = 'value'): unknown {
  return new Generator(schema).value(schema, name, 0, 0);
}

/** Tool arguments for a parameters schema: always an object, `{}` for a schema that is none. */
export function schemaArguments(schema: unknown): Record<string, unknown> {
  const value = schemaValue(isObject(schema) ? schema : { type: 'object' }, 'value');
  return isObject(value) ? value : {};
}
