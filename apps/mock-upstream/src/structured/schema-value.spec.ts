import { Ajv2020 } from 'ajv/dist/2020.js';
import AjvDraft7 from 'ajv';
import addFormats from 'ajv-formats';
import { schemaArguments, schemaValue } from './schema-value.js';

// Every value the generator makes is checked by a real validator (Ajv, with its formats),
// in the draft each schema is written for.

const ajv2020 = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv2020);
const ajv7 = new AjvDraft7.default({ strict: false, allErrors: true });
addFormats.default(ajv7);

function expectValid(schema: Record<string, unknown>, value: unknown, draft7 = false): void {
  const validate = (draft7 ? ajv7 : ajv2020).compile(schema);
  const valid = validate(value);
  expect({ value, errors: valid ? null : validate.errors }).toEqual({ value, errors: null });
}

const SCHEMAS: [string, Record<string, unknown>][] = [
  [
    'an object with required and optional properties, closed',
    {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 3, maxLength: 40 },
        age: { type: 'integer', minimum: 18, maximum: 120 },
        score: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
        active: { type: 'boolean' },
        nickname: { type: 'string' },
      },
      required: ['name', 'age', 'score', 'active'],
      additionalProperties: false,
    },
  ],
  [
    'string formats',
    {
      type: 'object',
      properties: {
        at: { type: 'string', format: 'date-time' },
        day: { type: 'string', format: 'date' },
        time: { type: 'string', format: 'time' },
        email: { type: 'string', format: 'email' },
        site: { type: 'string', format: 'uri' },
        id: { type: 'string', format: 'uuid' },
        host: { type: 'string', format: 'hostname' },
        v4: { type: 'string', format: 'ipv4' },
        v6: { type: 'string', format: 'ipv6' },
        wait: { type: 'string', format: 'duration' },
      },
      required: ['at', 'day', 'time', 'email', 'site', 'id', 'host', 'v4', 'v6', 'wait'],
      additionalProperties: false,
    },
  ],
  [
    'arrays with minItems, maxItems and unique items',
    {
      type: 'object',
      properties: {
        tags: { type: 'array', items: { type: 'string' }, minItems: 3, uniqueItems: true },
        scores: {
          type: 'array',
          items: { type: 'integer', minimum: 0, maximum: 10 },
          minItems: 2,
          uniqueItems: true,
        },
        none: { type: 'array', items: { type: 'string' }, maxItems: 0 },
        emails: { type: 'array', items: { type: 'string', format: 'email' }, minItems: 2 },
      },
      required: ['tags', 'scores', 'none', 'emails'],
    },
  ],
  [
    'enums, const and a nullable union',
    {
      type: 'object',
      properties: {
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        kind: { const: 'forecast' },
        note: { type: ['string', 'null'] },
        level: { anyOf: [{ type: 'integer', minimum: 5 }, { type: 'null' }] },
        shape: {
          oneOf: [
            { type: 'object', properties: { r: { type: 'number' } }, required: ['r'] },
            { type: 'object', properties: { w: { type: 'number' } }, required: ['w'] },
          ],
        },
      },
      required: ['unit', 'kind', 'note', 'level', 'shape'],
      additionalProperties: false,
    },
  ],
  [
    '$ref to $defs, recursive',
    {
      $defs: {
        step: {
          type: 'object',
          properties: { explanation: { type: 'string' }, output: { type: 'string' } },
          required: ['explanation', 'output'],
          additionalProperties: false,
        },
        node: {
          type: 'object',
          properties: {
            value: { type: 'integer' },
            children: { type: 'array', items: { $ref: '#/$defs/node' } },
          },
          required: ['value'],
        },
      },
      type: 'object',
      properties: {
        steps: { type: 'array', items: { $ref: '#/$defs/step' } },
        final_answer: { type: 'string' },
        tree: { $ref: '#/$defs/node' },
      },
      required: ['steps', 'final_answer', 'tree'],
      additionalProperties: false,
    },
  ],
  [
    'numbers with multipleOf and bounds, allOf, minProperties, tuples',
    {
      type: 'object',
      properties: {
        price: { type: 'number', minimum: 10.5, maximum: 99, multipleOf: 0.25 },
        even: { type: 'integer', exclusiveMinimum: 7, multipleOf: 2 },
        negative: { type: 'integer', maximum: -3 },
        merged: {
          allOf: [
            { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
            { properties: { b: { type: 'boolean' } }, required: ['b'] },
          ],
        },
        bag: { type: 'object', minProperties: 2, additionalProperties: { type: 'integer' } },
        pair: {
          type: 'array',
          prefixItems: [{ type: 'string' }, { type: 'number' }],
          items: false,
        },
        code: { type: 'string', pattern: '^[A-Z]{3}$' },
      },
      required: ['price', 'even', 'negative', 'merged', 'bag', 'pair', 'code'],
    },
  ],
];

describe('schemaValue', () => {
  it.each(SCHEMAS)('makes a valid value for %s', (_, schema) => {
    expectValid(schema, schemaValue(schema));
  });

  it('follows $ref to draft-07 definitions and tuple items', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      definitions: {
        address: {
          type: 'object',
          properties: { street: { type: 'string' }, zip: { type: 'string', pattern: '^\\d+$' } },
          required: ['street', 'zip'],
        },
      },
      type: 'object',
      properties: {
        home: { $ref: '#/definitions/address' },
        point: { type: 'array', items: [{ type: 'number' }, { type: 'number' }] },
        old: { type: 'number', minimum: 5, exclusiveMinimum: 5 },
      },
      required: ['home', 'point', 'old'],
    };
    expectValid(schema, schemaValue(schema), true);
  });

  it('reads Gemini schemas: upper-case types, nullable, enum format', () => {
    const gemini = {
      type: 'OBJECT',
      properties: {
        recipe: { type: 'STRING' },
        minutes: { type: 'INTEGER', nullable: true },
        level: { type: 'STRING', format: 'enum', enum: ['easy', 'hard'] },
        ingredients: { type: 'ARRAY', items: { type: 'STRING' } },
      },
      required: ['recipe', 'minutes', 'level', 'ingredients'],
    };
    expect(schemaValue(gemini)).toEqual({
      recipe: 'example recipe',
      minutes: 1,
      level: 'easy',
      ingredients: ['example ingredient'],
    });
  });

  it('is a function of the schema alone, and keeps the placeholders tools always had', () => {
    const schema = SCHEMAS[0]![1];
    expect(schemaValue(schema)).toEqual(schemaValue(structuredClone(schema)));
    expect(
      schemaArguments({
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
      }),
    ).toEqual({ city: 'example city' });
  });

  it('gives tools without a usable schema empty arguments', () => {
    expect(schemaArguments(undefined)).toEqual({});
    expect(schemaArguments({ type: 'object' })).toEqual({});
    expect(schemaArguments({ type: 'string' })).toEqual({});
  });
});
