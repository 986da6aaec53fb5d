import { readFileSync } from 'node:fs';
import { GatewayError } from '@switchyard/contracts';
import type { AnswerContext } from '../adapter.js';
import { translate } from '../stream.fixture.js';
import { geminiAdapter } from './gemini.adapter.js';

// Fixtures follow the examples of the Gemini API reference (Generating content, Function
// calling, Embeddings, Troubleshooting); the stream files are `alt=sse` streams as the API
// sends them, with a thought summary, cached tokens and a multi-byte character added.

const fixture = (name: string): Buffer =>
  readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

const context: AnswerContext = {
  model: 'gemini-2.5-flash',
  includeUsage: true,
  created: 1_700_000_000,
};

function request(body: Record<string, unknown>, stream = false): Record<string, unknown> {
  const outbound = geminiAdapter.chatRequest(
    { body, upstreamModel: 'gemini-2.5-flash', secret: 'AIza-secret', settings: {} },
    stream,
  );
  return JSON.parse(outbound.body.toString('utf8')) as Record<string, unknown>;
}

function refused(body: Record<string, unknown>): GatewayError {
  try {
    request({ messages: [{ role: 'user', content: 'x' }], ...body });
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('expected a refusal');
}

function answer(response: unknown): Record<string, unknown> {
  return JSON.parse(
    geminiAdapter.chatAnswer(Buffer.from(JSON.stringify(response)), context).body.toString(),
  ) as Record<string, unknown>;
}

describe('gemini requests', () => {
  it('sends the key header and the generateContent or streamGenerateContent path', () => {
    const input = {
      body: { messages: [{ role: 'user', content: 'Hi' }] },
      upstreamModel: 'models/gemini-2.5-flash',
      secret: 'AIza-secret',
      settings: {},
    };
    expect(geminiAdapter.chatRequest(input, false)).toMatchObject({
      path: '/v1beta/models/gemini-2.5-flash:generateContent',
      headers: { 'x-goog-api-key': 'AIza-secret' },
    });
    expect(geminiAdapter.chatRequest(input, true).path).toBe(
      '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
  });

  it('moves system and developer messages to systemInstruction, assistant to model, and sampling to generationConfig', () => {
    expect(
      request({
        model: 'gemini',
        messages: [
          { role: 'system', content: 'You are a cat.' },
          { role: 'developer', content: [{ type: 'text', text: 'Your name is Neko.' }] },
          { role: 'user', content: 'Hello there' },
          { role: 'assistant', content: 'Meow.' },
          { role: 'user', content: 'Good cat' },
        ],
        temperature: 1,
        top_p: 0.8,
        max_completion_tokens: 800,
        stop: ['Title'],
        presence_penalty: 0.5,
        seed: 7,
        response_format: { type: 'json_object' },
        user: 'ignored',
      }),
    ).toEqual({
      systemInstruction: { parts: [{ text: 'You are a cat.' }, { text: 'Your name is Neko.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Hello there' }] },
        { role: 'model', parts: [{ text: 'Meow.' }] },
        { role: 'user', parts: [{ text: 'Good cat' }] },
      ],
      generationConfig: {
        temperature: 1,
        topP: 0.8,
        presencePenalty: 0.5,
        seed: 7,
        maxOutputTokens: 800,
        stopSequences: ['Title'],
        responseMimeType: 'application/json',
      },
    });
    const schema = { type: 'object', properties: { recipe: { type: 'string' } } };
    expect(
      request({
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 10,
        response_format: { type: 'json_schema', json_schema: { name: 'r', schema } },
      }).generationConfig,
    ).toEqual({
      maxOutputTokens: 10,
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
  });

  it('sends data-URL images inline and refuses http image URLs with a 400', () => {
    expect(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Caption this image.' },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQSkZJRg==' } },
            ],
          },
        ],
      }).contents,
    ).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'Caption this image.' },
          { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQSkZJRg==' } },
        ],
      },
    ]);
    const error = refused({
      messages: [
        {
          role: 'user',
          content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } }],
        },
      ],
    });
    expect(error).toMatchObject({ status: 400, param: 'messages[0].content[0]' });
    expect(error.message).toMatch(/data URLs/);
  });

  it('converts tools, tool_choice, tool calls (signatures included) and tool results by name', () => {
    const converted = request({
      messages: [
        { role: 'user', content: 'Weather and time in Boston?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_r1_0:sig:CiQB0e2Kb+sig/A=',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"location":"Boston, MA"}' },
            },
            { id: 'call_r1_1', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        {
          role: 'tool',
          tool_call_id: 'call_r1_0:sig:CiQB0e2Kb+sig/A=',
          content: '{"temperature":21}',
        },
        { role: 'tool', tool_call_id: 'call_r1_1', content: '9am' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather',
            parameters: {
              type: 'object',
              properties: { location: { type: 'string' } },
              required: ['location'],
              additionalProperties: false,
            },
          },
        },
        { type: 'function', function: { name: 'get_time' } },
      ],
      tool_choice: 'required',
    });
    expect(converted.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Current weather',
            parametersJsonSchema: {
              type: 'object',
              properties: { location: { type: 'string' } },
              required: ['location'],
              additionalProperties: false,
            },
          },
          { name: 'get_time' },
        ],
      },
    ]);
    expect(converted.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(converted.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather and time in Boston?' }] },
      {
        role: 'model',
        parts: [
          {
            functionCall: { name: 'get_weather', args: { location: 'Boston, MA' } },
            thoughtSignature: 'CiQB0e2Kb+sig/A=',
          },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temperature: 21 } } },
          { functionResponse: { name: 'get_time', response: { output: '9am' } } },
        ],
      },
    ]);
    const tools = [{ type: 'function', function: { name: 'f' } }];
    const choice = (tool_choice: unknown): unknown =>
      request({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice }).toolConfig;
    expect(choice('auto')).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(choice('none')).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(choice({ type: 'function', function: { name: 'f' } })).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] },
    });
    expect(choice(undefined)).toBeUndefined();
  });

  it("sends a failed call's error object as the functionResponse error Gemini documents", () => {
    const converted = request({
      messages: [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 't1', content: '{"error":"city not found"}' },
      ],
    });
    expect((converted.contents as unknown[]).at(-1)).toEqual({
      role: 'user',
      parts: [{ functionResponse: { name: 'f', response: { error: 'city not found' } } }],
    });
  });

  it('refuses what Gemini cannot do with a 400 naming the field', () => {
    expect(refused({ n: 3 })).toMatchObject({ status: 400, param: 'n' });
    expect(refused({ functions: [] })).toMatchObject({ param: 'functions' });
    expect(refused({ response_format: { type: 'grammar' } })).toMatchObject({
      param: 'response_format',
    });
    expect(
      refused({ messages: [{ role: 'tool', tool_call_id: 'call_unknown', content: 'x' }] }),
    ).toMatchObject({ param: 'messages[0].tool_call_id' });
    expect(
      refused({
        messages: [
          {
            role: 'user',
            content: [{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }],
          },
        ],
      }),
    ).toMatchObject({ param: 'messages[0].content[0]' });
  });
});

describe('gemini answers', () => {
  it('converts a text answer with its usage: cached input inside prompt_tokens, thinking in completion_tokens', () => {
    const converted = answer({
      candidates: [
        {
          content: {
            parts: [{ text: 'I am thinking', thought: true }, { text: 'AI learns from data.' }],
            role: 'model',
          },
          finishReason: 'STOP',
          index: 0,
          safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' }],
        },
      ],
      usageMetadata: {
        promptTokenCount: 9,
        candidatesTokenCount: 12,
        totalTokenCount: 36,
        cachedContentTokenCount: 5,
        thoughtsTokenCount: 15,
      },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'Ny2taP_hAbKxz7IP',
    });
    expect(converted).toEqual({
      id: 'chatcmpl-Ny2taP_hAbKxz7IP',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gemini-2.5-flash',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'AI learns from data.' },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 9,
        completion_tokens: 27,
        total_tokens: 36,
        prompt_tokens_details: { cached_tokens: 5 },
        completion_tokens_details: { reasoning_tokens: 15 },
      },
    });
  });

  it('converts function calls to tool_calls (finish tool_calls) and each finishReason', () => {
    const choice = (finishReason: string | undefined, parts: unknown[] = [{ text: 'x' }]) =>
      (
        answer({
          candidates: [{ content: { parts, role: 'model' }, finishReason }],
          responseId: 'r1',
        }).choices as Record<string, unknown>[]
      )[0]!;
    expect(
      choice('STOP', [
        {
          functionCall: { name: 'schedule_meeting', args: { attendees: ['Bob'], time: '10:00' } },
          thoughtSignature: 'c2ln',
        },
        { functionCall: { id: 'fc-7', name: 'notify', args: {} } },
      ]),
    ).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_r1_0:sig:c2ln',
            type: 'function',
            function: {
              name: 'schedule_meeting',
              arguments: '{"attendees":["Bob"],"time":"10:00"}',
            },
          },
          { id: 'fc-7', type: 'function', function: { name: 'notify', arguments: '{}' } },
        ],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
    expect(choice('MAX_TOKENS').finish_reason).toBe('length');
    for (const reason of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII'])
      expect(choice(reason).finish_reason).toBe('content_filter');
    expect(choice('OTHER').finish_reason).toBe('stop');
  });

  it('answers a blocked prompt (no candidates) with content_filter', () => {
    expect(
      answer({
        promptFeedback: { blockReason: 'SAFETY' },
        usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
      }),
    ).toMatchObject({
      choices: [{ message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' }],
      usage: { prompt_tokens: 8, completion_tokens: 0 },
    });
  });
});

describe('gemini streams', () => {
  it('translates a text stream in order, whatever the chunking, skipping thoughts, with the usage chunk', () => {
    for (const size of [1, 7, 4096]) {
      const translator = geminiAdapter.chatStream(context);
      const events = translate(translator, fixture('text-stream.sse'), size);
      const base = {
        id: 'chatcmpl-mAitaLmkHPPlz7IPvtfUqQ4',
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model: 'gemini-2.5-flash',
      };
      const delta = (d: object, finish: string | null = null) => ({
        ...base,
        choices: [{ index: 0, delta: d, logprobs: null, finish_reason: finish }],
        usage: null,
      });
      expect(events).toEqual([
        delta({ role: 'assistant', content: '' }),
        delta({ content: 'Once upon' }),
        delta({ content: ' a time, in a wörld' }),
        delta({ content: ' far away.' }),
        delta({}, 'stop'),
        {
          ...base,
          choices: [],
          usage: {
            prompt_tokens: 11,
            completion_tokens: 32,
            total_tokens: 43,
            prompt_tokens_details: { cached_tokens: 4 },
            completion_tokens_details: { reasoning_tokens: 20 },
          },
        },
        '[DONE]',
      ]);
      expect(translator.usage).toEqual({ promptTokens: 11, completionTokens: 32, cachedTokens: 4 });
      expect(translator.failure).toBeNull();
    }
  });

  // Newer models send the calls in one event and the finish reason in a later one with an
  // empty text part: the turn still finishes with tool_calls.
  it('streams each function call whole with its id and name, numbered from 0, finishing with tool_calls', () => {
    const translator = geminiAdapter.chatStream({ ...context, includeUsage: false });
    const events = translate(translator, fixture('tool-stream.sse'), 13) as {
      choices?: {
        delta: { tool_calls?: unknown[]; content?: string };
        finish_reason: string | null;
      }[];
      usage?: unknown;
    }[];
    expect(events.some((e) => e.usage !== undefined)).toBe(false);
    const deltas = events.filter((e) => e !== ('[DONE]' as unknown)).map((e) => e.choices![0]!);
    expect(deltas.map((d) => d.delta.tool_calls ?? d.delta.content ?? d.finish_reason)).toEqual([
      '',
      'Let me check.',
      [
        {
          index: 0,
          id: 'call_Xk2taNnXGO3bz7IP-tool_0:sig:CiQB0e2Kb+sig/A=',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"location":"Boston, MA"}' },
        },
      ],
      [
        {
          index: 1,
          id: 'call_Xk2taNnXGO3bz7IP-tool_1',
          type: 'function',
          function: { name: 'get_time', arguments: '{"tz":"EST"}' },
        },
      ],
      'tool_calls',
    ]);
    expect(events.at(-1)).toBe('[DONE]');
    expect(translator.usage).toEqual({ promptTokens: 70, completionTokens: 30, cachedTokens: 0 });
  });

  it('ends with an OpenAI error event on an error event or a stream cut before its finish reason', () => {
    const text = fixture('text-stream.sse').toString();
    const firstEvent = text.slice(0, text.indexOf('\n\n') + 2);
    const failing = geminiAdapter.chatStream(context);
    const events = translate(
      failing,
      Buffer.from(
        `${firstEvent}data: {"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}\n\n`,
      ),
      64,
    );
    expect(events.at(-1)).toEqual({
      error: {
        message:
          'The upstream stream was interrupted: UNAVAILABLE: The model is overloaded. Please try again later.',
        type: 'upstream_error',
        param: null,
        code: 'stream_interrupted',
      },
    });
    expect(failing.failure).toMatch(/^UNAVAILABLE/);

    const cut = geminiAdapter.chatStream(context);
    expect(translate(cut, Buffer.from(firstEvent), 64).at(-1)).toMatchObject({
      error: { code: 'stream_interrupted' },
    });
    expect(cut.failure).toMatch(/finish reason/);
  });
});

describe('gemini errors', () => {
  it("renders Google's error bodies in OpenAI's shape, the status as the code", () => {
    const cases: [number, string, string, string][] = [
      [400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.', 'invalid_request_error'],
      [403, 'PERMISSION_DENIED', 'Your API key was reported as leaked.', 'permission_error'],
      [
        429,
        'RESOURCE_EXHAUSTED',
        'Resource has been exhausted (e.g. check quota).',
        'rate_limit_error',
      ],
      [500, 'INTERNAL', 'An internal error has occurred.', 'server_error'],
      [503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.', 'server_error'],
    ];
    for (const [code, status, message, type] of cases) {
      const error = geminiAdapter.error(
        code,
        Buffer.from(JSON.stringify({ error: { code, message, status } })),
      );
      expect(JSON.parse(error.body.toString())).toEqual({
        error: { message, type, param: null, code: status.toLowerCase() },
      });
      expect(
        geminiAdapter.healthStatus(
          code,
          Buffer.from(JSON.stringify({ error: { code, message, status } })),
        ),
      ).toBe(code);
    }
    // A revoked or unknown key is a 400 whose reason says so: a banned key for the router.
    const revoked = Buffer.from(
      JSON.stringify({
        error: {
          code: 400,
          message: 'API key not valid. Please pass a valid API key.',
          status: 'INVALID_ARGUMENT',
          details: [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'API_KEY_INVALID',
              domain: 'googleapis.com',
            },
          ],
        },
      }),
    );
    expect(geminiAdapter.healthStatus(400, revoked)).toBe(401);
    // FAILED_PRECONDITION is the account's state (region not served, billing off), not the
    // caller's mistake: a server error for the router, so the request fails over.
    for (const message of [
      'User location is not supported for the API use.',
      'Gemini API free tier is not available in your country. Please enable billing on your project in Google AI Studio.',
    ]) {
      const precondition = Buffer.from(
        JSON.stringify({ error: { code: 400, message, status: 'FAILED_PRECONDITION' } }),
      );
      expect(geminiAdapter.healthStatus(400, precondition)).toBe(502);
    }
    expect(
      geminiAdapter.healthStatus(
        400,
        Buffer.from(
          JSON.stringify({
            error: { code: 400, message: 'FAILED_PRECONDITION', status: 'INVALID_ARGUMENT' },
          }),
        ),
      ),
    ).toBe(400);
    const html = geminiAdapter.error(502, Buffer.from('<html>Bad gateway</html>'));
    expect(JSON.parse(html.body.toString()).error).toMatchObject({ type: 'server_error' });
  });
});

describe('gemini embeddings', () => {
  it('sends batchEmbedContents and answers OpenAI’s list, as floats or base64', () => {
    const embeddings = geminiAdapter.embeddings!;
    const outbound = embeddings.request({
      body: {
        model: 'e',
        input: ['What is the meaning of life?', 'How much wood?'],
        dimensions: 3,
      },
      upstreamModel: 'gemini-embedding-001',
      secret: 'AIza-secret',
      settings: {},
    });
    expect(outbound.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(outbound.headers).toEqual({ 'x-goog-api-key': 'AIza-secret' });
    expect(JSON.parse(outbound.body.toString())).toEqual({
      requests: [
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'What is the meaning of life?' }] },
          outputDimensionality: 3,
        },
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'How much wood?' }] },
          outputDimensionality: 3,
        },
      ],
    });
    const answer = Buffer.from(
      JSON.stringify({ embeddings: [{ values: [0.5, -0.25, 1] }, { values: [0, 0.125, -1] }] }),
    );
    expect(JSON.parse(embeddings.answer(answer, context).toString())).toEqual({
      object: 'list',
      model: 'gemini-2.5-flash',
      data: [
        { object: 'embedding', index: 0, embedding: [0.5, -0.25, 1] },
        { object: 'embedding', index: 1, embedding: [0, 0.125, -1] },
      ],
    });
    const encoded = JSON.parse(embeddings.answer(answer, { ...context, base64: true }).toString());
    const first = Buffer.from(encoded.data[0].embedding, 'base64');
    expect(Array.from(new Float32Array(first.buffer, first.byteOffset, 3))).toEqual([
      0.5, -0.25, 1,
    ]);
    expect(() =>
      embeddings.request({
        body: { input: [[1, 2]] },
        upstreamModel: 'm',
        secret: 's',
        settings: {},
      }),
    ).toThrow(GatewayError);
  });
});
