import { readFileSync } from 'node:fs';
import { GatewayError } from '@switchyard/contracts';
import type { AnswerContext } from '../adapter.js';
import {
  ChatToGeminiStream,
  GeminiFraming,
  GeminiStreamRelay,
  chatAnswerToGemini,
  chatErrorToGeminiError,
  embeddingsToGemini,
  geminiErrorBody,
  geminiStatusName,
  geminiUpstreamError,
} from './front-answer.js';
import {
  geminiInputText,
  geminiToChatRequest,
  geminiToEmbeddingsRequest,
  jsonSchemaOf,
} from './front-request.js';

// Gemini's API in front (docs/providers.md, "Gemini's API in front"). Requests follow the
// examples of Google's API reference (generateContent, function calling, structured output,
// embeddings); the Gemini stream is the gemini adapter's fixture.

const context: AnswerContext = { model: 'gpt-4o', includeUsage: true, created: 1_700_000_000 };

/** Feeds a stream in pieces of `size` bytes and returns what the translator wrote. */
function feed(
  translator: { push(b: Buffer): string; end(): string },
  stream: string,
  size: number,
): string {
  const bytes = Buffer.from(stream);
  let out = '';
  for (let at = 0; at < bytes.length; at += size)
    out += translator.push(bytes.subarray(at, at + size));
  return out + translator.end();
}

function sseData(text: string): Record<string, unknown>[] {
  return text
    .split('\r\n\r\n')
    .filter((e) => e !== '')
    .map((e) => {
      expect(e.startsWith('data: ')).toBe(true);
      return JSON.parse(e.slice(6)) as Record<string, unknown>;
    });
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'chatcmpl-abc', model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

const usageChunk = `data: ${JSON.stringify({ id: 'chatcmpl-abc', choices: [], usage: { prompt_tokens: 11, completion_tokens: 7 } })}\n\n`;

describe("Gemini's request as an OpenAI chat completion", () => {
  it('converts text, the system instruction and the generation config', () => {
    const chat = geminiToChatRequest(
      {
        systemInstruction: { parts: [{ text: 'You are a cat.' }] },
        contents: [
          { role: 'user', parts: [{ text: 'Hello' }] },
          { role: 'model', parts: [{ text: 'Meow.' }] },
          { role: 'user', parts: [{ text: 'Why?' }] },
        ],
        generationConfig: {
          temperature: 0.5,
          topP: 0.9,
          maxOutputTokens: 100,
          stopSequences: ['END'],
        },
      },
      'gpt-4o',
      true,
    );
    expect(chat).toEqual({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'You are a cat.' },
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: 'Meow.' },
        { role: 'user', content: 'Why?' },
      ],
      temperature: 0.5,
      top_p: 0.9,
      max_tokens: 100,
      stop: ['END'],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('converts inline images to data URLs', () => {
    const chat = geminiToChatRequest(
      {
        contents: [
          {
            role: 'user',
            parts: [
              { text: 'What is this?' },
              { inlineData: { mimeType: 'image/png', data: 'iVBOR' } },
            ],
          },
        ],
      },
      'gpt-4o',
      false,
    );
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
        ],
      },
    ]);
  });

  it('converts function declarations, calls and responses, matching calls by name', () => {
    const chat = geminiToChatRequest(
      {
        contents: [
          { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
          {
            role: 'model',
            parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }],
          },
          {
            role: 'user',
            parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }],
          },
        ],
        tools: [
          {
            functionDeclarations: [
              {
                name: 'get_weather',
                description: 'Weather of a city',
                parameters: {
                  type: 'OBJECT',
                  properties: { city: { type: 'STRING' } },
                  required: ['city'],
                },
              },
            ],
          },
        ],
        toolConfig: {
          functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
        },
      },
      'gpt-4o',
      false,
    );
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
    ]);
    expect(chat.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather of a city',
          parameters: {
            type: 'object',
            properties: { city: { type: 'string' } },
            required: ['city'],
          },
        },
      },
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
  });

  it('turns responseSchema and responseJsonSchema into a json_schema response format', () => {
    const withSchema = geminiToChatRequest(
      {
        contents: [{ parts: [{ text: 'A recipe' }] }],
        generationConfig: {
          responseMimeType: 'application/json',
          responseSchema: {
            type: 'OBJECT',
            properties: { name: { type: 'STRING', nullable: true } },
            propertyOrdering: ['name'],
          },
        },
      },
      'gpt-4o',
      false,
    );
    expect(withSchema.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'response',
        schema: { type: 'object', properties: { name: { type: ['string', 'null'] } } },
      },
    });
    const jsonSchema = { type: 'object', properties: { n: { type: 'integer' } } };
    const direct = geminiToChatRequest(
      {
        contents: [{ parts: [{ text: 'n' }] }],
        generationConfig: { responseMimeType: 'application/json', responseJsonSchema: jsonSchema },
      },
      'gpt-4o',
      false,
    );
    expect(direct.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema: jsonSchema },
    });
    const anyJson = geminiToChatRequest(
      {
        contents: [{ parts: [{ text: 'n' }] }],
        generationConfig: { responseMimeType: 'application/json' },
      },
      'gpt-4o',
      false,
    );
    expect(anyJson.response_format).toEqual({ type: 'json_object' });
  });

  it('refuses what an OpenAI chat completion cannot carry, in 400s naming the field', () => {
    const refused = (body: Record<string, unknown>): GatewayError => {
      try {
        geminiToChatRequest(body, 'gpt-4o', false);
      } catch (error) {
        return error as GatewayError;
      }
      throw new Error('not refused');
    };
    const contents = [{ parts: [{ text: 'x' }] }];
    expect(refused({ contents, tools: [{ googleSearch: {} }] }).param).toBe('tools[0]');
    expect(refused({ contents, cachedContent: 'cachedContents/abc' }).param).toBe('cachedContent');
    expect(refused({ contents, generationConfig: { candidateCount: 2 } }).param).toBe(
      'generationConfig.candidateCount',
    );
    expect(refused({ contents: [{ parts: [{ fileData: { fileUri: 'gs://x' } }] }] }).param).toBe(
      'contents[0].parts[0]',
    );
    expect(
      refused({ contents: [{ parts: [{ functionResponse: { name: 'f', response: {} } }] }] })
        .status,
    ).toBe(400);
  });

  it('reads the texts a model reads, for the tokenizer', () => {
    expect(
      geminiInputText({
        systemInstruction: { parts: [{ text: 'sys' }] },
        contents: [{ parts: [{ text: 'hi' }, { functionCall: { name: 'f', args: { a: 1 } } }] }],
      }),
    ).toBe('sys\nhi\nf{"a":1}');
  });

  it('lowers Gemini schema types recursively', () => {
    expect(jsonSchemaOf({ type: 'ARRAY', items: { type: 'NUMBER' } })).toEqual({
      type: 'array',
      items: { type: 'number' },
    });
  });
});

describe("OpenAI's answers as Gemini's", () => {
  it('converts a chat completion with text and tool calls, usage as usageMetadata', () => {
    const completion = {
      id: 'chatcmpl-123',
      model: 'gpt-4o-2024',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Let me look.',
            tool_calls: [
              { id: 'call_9', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    };
    const answer = chatAnswerToGemini(Buffer.from(JSON.stringify(completion)), context);
    expect(JSON.parse(answer.body.toString())).toEqual({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'Let me look.' },
              { functionCall: { id: 'call_9', name: 'f', args: { a: 1 } } },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: 'gpt-4o-2024',
      responseId: '123',
    });
    expect(answer.usage).toEqual({ promptTokens: 10, completionTokens: 5 });
  });

  it('maps a length stop to MAX_TOKENS', () => {
    const completion = {
      choices: [{ message: { content: 'cut' }, finish_reason: 'length' }],
    };
    const answer = chatAnswerToGemini(Buffer.from(JSON.stringify(completion)), context);
    const body = JSON.parse(answer.body.toString()) as { candidates: { finishReason: string }[] };
    expect(body.candidates[0]!.finishReason).toBe('MAX_TOKENS');
  });

  it("writes errors in Google's shape, with its status names", () => {
    expect(JSON.parse(geminiErrorBody(429, 'slow down').toString())).toEqual({
      error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' },
    });
    const converted = chatErrorToGeminiError(
      401,
      Buffer.from(JSON.stringify({ error: { message: 'bad key', type: 'invalid_request_error' } })),
    );
    expect(JSON.parse(converted.toString())).toEqual({
      error: { code: 401, message: 'bad key', status: 'UNAUTHENTICATED' },
    });
    const google = Buffer.from(
      JSON.stringify({ error: { code: 400, message: 'bad', status: 'INVALID_ARGUMENT' } }),
    );
    expect(geminiUpstreamError(400, google)).toBe(google);
    expect(JSON.parse(geminiUpstreamError(502, Buffer.from('<html>')).toString())).toEqual({
      error: { code: 502, message: 'The upstream answered 502.', status: 'UNAVAILABLE' },
    });
    expect([400, 403, 404, 500, 503].map(geminiStatusName)).toEqual([
      'INVALID_ARGUMENT',
      'PERMISSION_DENIED',
      'NOT_FOUND',
      'INTERNAL',
      'UNAVAILABLE',
    ]);
  });

  it('converts a chat stream event by event, whole function calls and usage last', () => {
    const stream =
      chunk({ role: 'assistant', content: '' }) +
      chunk({ content: 'Hel' }) +
      chunk({ content: 'lo' }) +
      chunk({
        tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: '{"a"' } }],
      }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }) +
      chunk({}, 'tool_calls') +
      usageChunk +
      'data: [DONE]\n\n';
    for (const size of [1, 7, stream.length]) {
      const translator = new ChatToGeminiStream(context, new GeminiFraming(true));
      const events = sseData(feed(translator, stream, size));
      expect(
        events.map((e) => (e.candidates as { content: { parts: unknown[] } }[])[0]!.content.parts),
      ).toEqual([
        [{ text: 'Hel' }],
        [{ text: 'lo' }],
        [{ functionCall: { id: 'call_1', name: 'f', args: { a: 1 } } }],
      ]);
      expect(events.at(-1)).toMatchObject({
        candidates: [{ finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 },
        responseId: 'abc',
      });
      expect(translator.usage).toEqual({ promptTokens: 11, completionTokens: 7 });
      expect(translator.failure).toBeNull();
    }
  });

  it('writes the stream as one JSON array without alt=sse', () => {
    const stream = chunk({ content: 'Hi' }) + chunk({}, 'stop') + usageChunk + 'data: [DONE]\n\n';
    const out = feed(new ChatToGeminiStream(context, new GeminiFraming(false)), stream, 5);
    const array = JSON.parse(out) as Record<string, unknown>[];
    expect(array).toHaveLength(2);
    expect(array[0]).toMatchObject({ candidates: [{ content: { parts: [{ text: 'Hi' }] } }] });
    expect(array[1]).toMatchObject({ usageMetadata: { totalTokenCount: 18 } });
    expect(out.split('\n\n').filter((piece) => piece !== '').length).toBe(3);
  });

  it('ends a stream cut before its finish with an error element', () => {
    const translator = new ChatToGeminiStream(context, new GeminiFraming(false));
    const out = feed(translator, chunk({ content: 'Hi' }), 3);
    const array = JSON.parse(out) as Record<string, unknown>[];
    expect(array.at(-1)).toMatchObject({ error: { code: 500, status: 'INTERNAL' } });
    expect(translator.failure).toMatch(/finish reason/);
  });

  it('converts an embeddings list to embedContent and batchEmbedContents answers', () => {
    const list = Buffer.from(
      JSON.stringify({
        object: 'list',
        data: [{ embedding: [0.1, 0.2] }, { embedding: [0.3, 0.4] }],
        usage: { prompt_tokens: 4, total_tokens: 4 },
      }),
    );
    expect(JSON.parse(embeddingsToGemini(list, true).body.toString())).toEqual({
      embeddings: [{ values: [0.1, 0.2] }, { values: [0.3, 0.4] }],
    });
    const one = embeddingsToGemini(list, false);
    expect(JSON.parse(one.body.toString())).toEqual({ embedding: { values: [0.1, 0.2] } });
    expect(one.usage).toEqual({ promptTokens: 4, completionTokens: 0 });
    expect(
      geminiToEmbeddingsRequest(
        {
          requests: [
            { model: 'models/e', content: { parts: [{ text: 'a' }] }, outputDimensionality: 3 },
            { model: 'models/e', content: { parts: [{ text: 'b' }] } },
          ],
        },
        'text-embedding-3-small',
        true,
      ),
    ).toEqual({ model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 3 });
  });
});

describe("a gemini channel's stream, relayed", () => {
  const fixture = (name: string): string =>
    readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

  it('passes each response on, reads its usage, and frames it as asked', () => {
    const stream = fixture('text-stream.sse');
    const relay = new GeminiStreamRelay(new GeminiFraming(false));
    const array = JSON.parse(feed(relay, stream, 9)) as Record<string, unknown>[];
    const upstream = stream
      .split(/\r?\n\r?\n/)
      .filter((e) => e.startsWith('data: '))
      .map((e) => JSON.parse(e.slice(6)) as unknown);
    expect(array).toEqual(upstream);
    expect(relay.usage).not.toBeNull();
    expect(relay.failure).toBeNull();
  });

  it('fails a stream that ends before a finish reason', () => {
    const relay = new GeminiStreamRelay(new GeminiFraming(true));
    const out = feed(
      relay,
      `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'a' }] } }] })}\r\n\r\n`,
      4,
    );
    expect(sseData(out).at(-1)).toMatchObject({ error: { status: 'INTERNAL' } });
    expect(relay.failure).toMatch(/finish reason/);
  });
});
