import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, MockUpstreamEnv } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { createService } from '@switchyard/service';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import OpenAI from 'openai';
import request from 'supertest';
import { MockUpstreamModule } from '../app.module.js';

// Structured output in each dialect's place for it, over HTTP: whatever the mock answers
// must pass a real validator against the schema the request gave.

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

const REPORT = {
  $defs: {
    reading: {
      type: 'object',
      properties: {
        at: { type: 'string', format: 'date-time' },
        celsius: { type: 'number', minimum: -60, maximum: 60 },
      },
      required: ['at', 'celsius'],
      additionalProperties: false,
    },
  },
  type: 'object',
  properties: {
    city: { type: 'string' },
    contact: { type: 'string', format: 'email' },
    source: { type: 'string', format: 'uri' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 3, maximum: 7 },
    alert: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    readings: { type: 'array', items: { $ref: '#/$defs/reading' }, minItems: 2 },
  },
  required: ['city', 'contact', 'source', 'unit', 'days', 'alert', 'readings'],
  additionalProperties: false,
};

function expectValid(schema: object, text: unknown): unknown {
  expect(typeof text).toBe('string');
  const value: unknown = JSON.parse(text as string);
  const validate = ajv.compile(schema);
  expect({ value, errors: validate(value) ? null : validate.errors }).toEqual({
    value,
    errors: null,
  });
  return value;
}

describe('mock-upstream: structured output', () => {
  let app: NestFastifyApplication;
  let baseURL: string;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    const env = loadEnvironment(MockUpstreamEnv, { MOCK_ACCOUNTS: 'sk-a' });
    app = await createService(
      {
        name: 'mock-upstream',
        environment: MockUpstreamEnv,
        module: (env) => MockUpstreamModule.forRoot(env),
        port: () => 0,
      },
      env,
      createLogger({ service: 'mock-upstream', level: 'silent' }),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    baseURL = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app.close();
  });

  const chat = (body: object, headers: Record<string, string> = {}) =>
    http()
      .post('/v1/chat/completions')
      .set('authorization', 'Bearer sk-a')
      .set(headers)
      .send({ model: 'gpt-4o', messages: [{ role: 'user', content: 'weather?' }], ...body });

  describe('chat completions', () => {
    it('answers JSON valid against a json_schema response_format, the same each time', async () => {
      const format = {
        type: 'json_schema',
        json_schema: { name: 'report', strict: true, schema: REPORT },
      };
      const first = await chat({ response_format: format }).expect(200);
      const content = first.body.choices[0].message.content as string;
      expectValid(REPORT, content);
      expect(first.body.choices[0].finish_reason).toBe('stop');
      const again = await chat({ response_format: format }).expect(200);
      expect(again.body.choices[0].message.content).toBe(content);
    });

    it('streams the same JSON through the official SDK', async () => {
      const client = new OpenAI({ apiKey: 'sk-a', baseURL: `${baseURL}/v1`, maxRetries: 0 });
      const stream = await client.chat.completions.create({
        model: 'gpt-4o',
        stream: true,
        messages: [{ role: 'user', content: 'weather?' }],
        response_format: { type: 'json_schema', json_schema: { name: 'report', schema: REPORT } },
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expectValid(REPORT, text);
    });

    it('answers json_object with the JSON object in the prompt, else the prompt in one', async () => {
      const written = await chat({
        response_format: { type: 'json_object' },
        messages: [{ role: 'user', content: 'reply with {"ok": true}' }],
      }).expect(200);
      expect(JSON.parse(written.body.choices[0].message.content)).toEqual({ ok: true });
      const plain = await chat({ response_format: { type: 'json_object' } }).expect(200);
      expect(JSON.parse(plain.body.choices[0].message.content)).toEqual({ echo: 'weather?' });
    });

    it('says what the test told it to instead (x-mock-reply), even when JSON was asked', async () => {
      const response = await chat(
        { response_format: { type: 'json_schema', json_schema: { name: 'r', schema: REPORT } } },
        { 'x-mock-reply': 'not json' },
      ).expect(200);
      expect(response.body.choices[0].message.content).toBe('not json');
    });

    it('fills a forced tool call with arguments valid against its parameters', async () => {
      const tools = [
        { type: 'function', function: { name: 'noop', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'report', parameters: REPORT } },
      ];
      const forced = await chat({
        tools,
        tool_choice: { type: 'function', function: { name: 'report' } },
      }).expect(200);
      const call = forced.body.choices[0].message.tool_calls[0].function;
      expect(call.name).toBe('report');
      expectValid(REPORT, call.arguments);
      // JSON written in the prompt is still passed on as it is.
      const written = await chat({
        tools,
        tool_choice: { type: 'function', function: { name: 'report' } },
        messages: [{ role: 'user', content: 'report {"city": "Oslo"}' }],
      }).expect(200);
      expect(written.body.choices[0].message.tool_calls[0].function.arguments).toBe(
        '{"city": "Oslo"}',
      );
    });

    it.each([
      [{ type: 'xml' }, "Invalid value: 'xml'"],
      [{ type: 'json_schema' }, "Missing required parameter: 'response_format.json_schema'."],
      [{ type: 'json_schema', json_schema: { name: 'r' } }, 'response_format.json_schema.schema'],
      ['json', "Missing required parameter: 'response_format.type'."],
    ])('refuses response_format %j with a 400', async (format, message) => {
      const response = await chat({ response_format: format }).expect(400);
      expect(response.body.error.type).toBe('invalid_request_error');
      expect(response.body.error.message).toContain(message);
    });

    it('answers on Azure deployments too', async () => {
      const response = await http()
        .post('/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21')
        .set('api-key', 'sk-a')
        .send({
          messages: [{ role: 'user', content: 'weather?' }],
          response_format: { type: 'json_schema', json_schema: { name: 'r', schema: REPORT } },
        })
        .expect(200);
      expectValid(REPORT, response.body.choices[0].message.content);
    });
  });

  describe('Responses API', () => {
    const responses = (body: object) =>
      http()
        .post('/v1/responses')
        .set('authorization', 'Bearer sk-a')
        .send({ model: 'gpt-4o', input: 'weather?', ...body });

    it('answers output_text valid against text.format, and echoes the format', async () => {
      const text = { format: { type: 'json_schema', name: 'report', schema: REPORT } };
      const response = await responses({ text }).expect(200);
      expectValid(REPORT, response.body.output[0].content[0].text);
      expect(response.body.text).toEqual(text);
    });

    it('streams it in output_text deltas', async () => {
      const response = await responses({
        stream: true,
        text: { format: { type: 'json_schema', name: 'report', schema: REPORT } },
      }).expect(200);
      const done = response.text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as { type: string; text?: string })
        .find((event) => event.type === 'response.output_text.done');
      expectValid(REPORT, done?.text);
    });

    it('refuses a json_schema format without its schema', async () => {
      const response = await responses({
        text: { format: { type: 'json_schema', name: 'r' } },
      }).expect(400);
      expect(response.body.error.message).toContain("'text.format.schema'");
    });
  });

  describe('Anthropic Messages API', () => {
    const messages = (body: object) =>
      http()
        .post('/v1/messages')
        .set('x-api-key', 'sk-a')
        .set('anthropic-version', '2023-06-01')
        .send({
          model: 'claude-sonnet-4-5',
          max_tokens: 100,
          messages: [{ role: 'user', content: 'weather?' }],
          ...body,
        });

    it('fills the tool tool_choice forces with input valid against its input_schema', async () => {
      const response = await messages({
        tools: [
          { name: 'noop', input_schema: { type: 'object' } },
          { name: 'report', input_schema: REPORT },
        ],
        tool_choice: { type: 'tool', name: 'report' },
      }).expect(200);
      expect(response.body.content[0]).toMatchObject({ type: 'tool_use', name: 'report' });
      expectValid(REPORT, JSON.stringify(response.body.content[0].input));
    });

    it('answers text valid against structured outputs, in either field', async () => {
      for (const body of [
        { output_config: { format: { type: 'json_schema', schema: REPORT } } },
        { output_format: { type: 'json_schema', schema: REPORT } },
      ]) {
        const response = await messages(body).expect(200);
        expectValid(REPORT, response.body.content[0].text);
      }
    });

    it('refuses a format that is not json_schema', async () => {
      const response = await messages({ output_format: { type: 'yaml' } }).expect(400);
      expect(response.body).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringContaining('output_format') },
      });
    });
  });

  describe('Gemini API', () => {
    const generate = (generationConfig: object) =>
      http()
        .post('/v1beta/models/gemini-2.5-flash:generateContent')
        .set('x-goog-api-key', 'sk-a')
        .send({ contents: [{ role: 'user', parts: [{ text: 'weather?' }] }], generationConfig });

    it('answers a text part valid against responseJsonSchema', async () => {
      const response = await generate({
        responseMimeType: 'application/json',
        responseJsonSchema: REPORT,
      }).expect(200);
      expectValid(REPORT, response.body.candidates[0].content.parts[0].text);
    });

    it("answers a text part valid against responseSchema, Google's OpenAPI flavour", async () => {
      const schema = {
        type: 'OBJECT',
        properties: {
          recipe: { type: 'STRING' },
          minutes: { type: 'INTEGER', minimum: 5 },
          tags: { type: 'ARRAY', items: { type: 'STRING' }, minItems: 2 },
          note: { type: 'STRING', nullable: true },
        },
        required: ['recipe', 'minutes', 'tags'],
      };
      const response = await generate({
        responseMimeType: 'application/json',
        responseSchema: schema,
      }).expect(200);
      expect(JSON.parse(response.body.candidates[0].content.parts[0].text)).toEqual({
        recipe: 'example recipe',
        minutes: 5,
        tags: ['example tag', 'example tag 2'],
      });
    });

    it('answers an enum value as bare text under text/x.enum', async () => {
      const response = await generate({
        responseMimeType: 'text/x.enum',
        responseSchema: { type: 'STRING', enum: ['sunny', 'rainy'] },
      }).expect(200);
      expect(response.body.candidates[0].content.parts[0].text).toBe('sunny');
    });

    it('fills a function call with arguments valid against parametersJsonSchema', async () => {
      const response = await http()
        .post('/v1beta/models/gemini-2.5-flash:generateContent')
        .set('x-goog-api-key', 'sk-a')
        .send({
          contents: [{ role: 'user', parts: [{ text: 'weather?' }] }],
          tools: [{ functionDeclarations: [{ name: 'report', parametersJsonSchema: REPORT }] }],
          toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['report'] } },
        })
        .expect(200);
      const call = response.body.candidates[0].content.parts[0].functionCall;
      expectValid(REPORT, JSON.stringify(call.args));
    });

    it('refuses a schema without a JSON response type', async () => {
      const response = await generate({ responseSchema: { type: 'STRING' } }).expect(400);
      expect(response.body.error.status).toBe('INVALID_ARGUMENT');
    });
  });
});
