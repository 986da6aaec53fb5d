import { readFileSync } from 'node:fs';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { Hash } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';
import { GatewayError } from '@switchyard/contracts';
import { outboundHeaders, type AnswerContext } from '../adapter.js';
import { translate } from '../stream.fixture.js';
import { isAwsKeyPair } from './bedrock-credentials.js';
import { bedrockAdapter } from './bedrock.adapter.js';

// Fixtures follow the examples of the Bedrock Converse and ConverseStream API references
// (the `top_song` tool example); the stream is encoded here with the AWS event stream codec,
// as Bedrock frames it, with a second tool call, cache tokens and multi-byte text added.

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function frame(headers: Record<string, string>, payload: unknown): Buffer {
  return Buffer.from(
    codec.encode({
      headers: Object.fromEntries(
        Object.entries(headers).map(([name, value]) => [name, { type: 'string', value }]),
      ),
      body: fromUtf8(JSON.stringify(payload)),
    }),
  );
}

function eventStream(events: { event: string; payload: unknown }[]): Buffer {
  return Buffer.concat(
    events.map(({ event, payload }) =>
      frame(
        { ':event-type': event, ':content-type': 'application/json', ':message-type': 'event' },
        payload,
      ),
    ),
  );
}

/** An OpenAI stream event as the spec reads it. */
type Chunk = {
  choices: { delta: unknown; finish_reason: string | null }[];
  usage?: unknown;
  error?: unknown;
};

const KEY = 'AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const context: AnswerContext = { model: MODEL, includeUsage: true, created: 1_700_000_000 };

function outbound(body: Record<string, unknown>, stream = false) {
  return bedrockAdapter.chatRequest(
    { body, upstreamModel: MODEL, secret: KEY, settings: { region: 'eu-west-1' } },
    stream,
  );
}

function request(body: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(outbound(body).body.toString('utf8')) as Record<string, unknown>;
}

function refused(body: Record<string, unknown>): GatewayError {
  try {
    request({ messages: [{ role: 'user', content: 'x' }], ...body });
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('expected a refusal');
}

describe('bedrock requests', () => {
  it('posts to the model converse or converse-stream path, the model id escaped', () => {
    const body = { messages: [{ role: 'user', content: 'Hi' }] };
    expect(outbound(body).path).toBe('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse');
    expect(outbound(body, true).path).toBe(
      '/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream',
    );
  });

  it('signs with Signature V4 for the channel region and the bedrock service, verifiably', async () => {
    const request = outbound({ messages: [{ role: 'user', content: 'Hi' }] });
    const url = new URL(`https://bedrock-runtime.eu-west-1.amazonaws.com${request.path}`);
    const headers = await outboundHeaders(request, url);
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
    expect(JSON.stringify(headers)).not.toContain('wJalrXUtnFEMI');
    // The signature AWS recomputes from the same request and secret matches.
    const signer = new SignatureV4({
      service: 'bedrock',
      region: 'eu-west-1',
      credentials: {
        accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
        secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      },
      sha256: Hash.bind(null, 'sha256'),
    });
    const amzDate = headers['x-amz-date']!;
    const date = new Date(
      `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
    );
    const again = await signer.sign(
      {
        method: 'POST',
        protocol: 'https:',
        hostname: url.hostname,
        path: url.pathname,
        query: {},
        headers: { host: url.host },
        body: request.body,
      },
      { signingDate: date },
    );
    expect(again.headers.authorization).toBe(headers.authorization);
  });

  it('sends the session token of temporary credentials', async () => {
    const request = bedrockAdapter.chatRequest(
      {
        body: { messages: [{ role: 'user', content: 'Hi' }] },
        upstreamModel: MODEL,
        secret: `${KEY}:IQoJb3JpZ2luX2VjEXAMPLETOKEN`,
        settings: { region: 'us-east-1' },
      },
      false,
    );
    const headers = await outboundHeaders(request, new URL(`http://127.0.0.1:9${request.path}`));
    expect(headers['x-amz-security-token']).toBe('IQoJb3JpZ2luX2VjEXAMPLETOKEN');
    expect(headers.authorization).toContain('x-amz-security-token');
  });

  it('accepts only the documented key format', () => {
    expect(isAwsKeyPair(KEY)).toBe(true);
    expect(isAwsKeyPair(`${KEY}:IQoJb3JpZ2luX2VjEXAMPLETOKEN`)).toBe(true);
    expect(isAwsKeyPair('sk-abcdefghijklmnop')).toBe(false);
    expect(isAwsKeyPair('AKIAIOSFODNN7EXAMPLE')).toBe(false);
    expect(isAwsKeyPair('AKIAIOSFODNN7EXAMPLE:short')).toBe(false);
  });

  it('moves system and developer messages to system, sampling to inferenceConfig, merges turns', () => {
    expect(
      request({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
          { role: 'user', content: 'Hi' },
          {
            role: 'user',
            content: [
              { type: 'text', text: '' },
              { type: 'text', text: 'there' },
            ],
          },
        ],
        max_completion_tokens: 100,
        temperature: 0.2,
        top_p: 0.9,
        stop: 'END',
        user: 'u-1',
      }),
    ).toEqual({
      system: [{ text: 'Be brief.' }, { text: 'Answer in French.' }],
      messages: [{ role: 'user', content: [{ text: 'Hi' }, { text: 'there' }] }],
      inferenceConfig: { maxTokens: 100, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
    });
  });

  it('sends data URL images as bytes with their format and refuses image URLs', () => {
    expect(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
            ],
          },
        ],
      }).messages,
    ).toEqual([
      {
        role: 'user',
        content: [
          { text: 'What is this?' },
          { image: { format: 'jpeg', source: { bytes: '/9j/4AAQ' } } },
        ],
      },
    ]);
    const error = refused({
      messages: [
        {
          role: 'user',
          content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }],
        },
      ],
    });
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.param).toBe('messages[0].content[0]');
    expect(error.message).toMatch(/data URLs/);
    expect(
      refused({
        messages: [
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }],
          },
        ],
      }).message,
    ).toMatch(/PNG, JPEG, GIF or WebP/);
  });

  it('converts tools, tool_choice, tool calls and results (parallel results in one turn)', () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'top_song',
          description: 'Get the most popular song played on a radio station.',
          parameters: { type: 'object', properties: { sign: { type: 'string' } } },
        },
      },
    ];
    const body = request({
      messages: [
        { role: 'user', content: 'Top songs on WZPZ and WKRP?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 't1',
              type: 'function',
              function: { name: 'top_song', arguments: '{"sign":"WZPZ"}' },
            },
            {
              id: 't2',
              type: 'function',
              function: { name: 'top_song', arguments: '{"sign":"WKRP"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 't1', content: '{"song":"Elemental Hotel"}' },
        { role: 'tool', tool_call_id: 't2', content: 'Unknown station' },
      ],
      tools,
      tool_choice: { type: 'function', function: { name: 'top_song' } },
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'Top songs on WZPZ and WKRP?' }] },
      {
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: 't1', name: 'top_song', input: { sign: 'WZPZ' } } },
          { toolUse: { toolUseId: 't2', name: 'top_song', input: { sign: 'WKRP' } } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 't1', content: [{ json: { song: 'Elemental Hotel' } }] } },
          { toolResult: { toolUseId: 't2', content: [{ text: 'Unknown station' }] } },
        ],
      },
    ]);
    expect(body.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'top_song',
            description: 'Get the most popular song played on a radio station.',
            inputSchema: { json: tools[0]!.function.parameters },
          },
        },
      ],
      toolChoice: { tool: { name: 'top_song' } },
    });
    const base = { messages: [{ role: 'user', content: 'x' }], tools };
    expect(
      (request({ ...base, tool_choice: 'required' }).toolConfig as { toolChoice: unknown })
        .toolChoice,
    ).toEqual({ any: {} });
    expect(
      (request({ ...base, tool_choice: 'auto' }).toolConfig as { toolChoice: unknown }).toolChoice,
    ).toEqual({ auto: {} });
    // Converse has no `none`: without tool blocks in the conversation the tools stay home.
    expect(request({ ...base, tool_choice: 'none' }).toolConfig).toBeUndefined();
  });

  it('refuses what Converse cannot express, naming the field', () => {
    expect(refused({ n: 2 }).param).toBe('n');
    expect(refused({ response_format: { type: 'json_object' } }).param).toBe('response_format');
    expect(
      refused({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] })
        .param,
    ).toBe('messages[0].content[0]');
  });
});

describe('bedrock answers', () => {
  it('turns text and toolUse blocks into content and tool_calls, tool_use into tool_calls, counting cache reads in the prompt', () => {
    const answer = bedrockAdapter.chatAnswer(
      Buffer.from(JSON.stringify(fixture('converse-tool-answer.json'))),
      context,
    );
    const body = JSON.parse(answer.body.toString()) as Record<string, unknown>;
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: MODEL,
      choices: [
        {
          message: {
            role: 'assistant',
            content: "I'll look up the most popular song on WZPZ.",
            tool_calls: [
              {
                id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q',
                type: 'function',
                function: { name: 'top_song', arguments: '{"sign":"WZPZ"}' },
              },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: {
        prompt_tokens: 475,
        completion_tokens: 56,
        total_tokens: 531,
        prompt_tokens_details: { cached_tokens: 100 },
      },
    });
    expect(answer.usage).toEqual({ promptTokens: 475, completionTokens: 56, cachedTokens: 100 });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['guardrail_intervened', 'content_filter'],
    ['content_filtered', 'content_filter'],
  ])('reads stopReason %s as %s', (stopReason, finish) => {
    const answer = bedrockAdapter.chatAnswer(
      Buffer.from(
        JSON.stringify({
          output: { message: { role: 'assistant', content: [{ text: 'x' }] } },
          stopReason,
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        }),
      ),
      context,
    );
    expect(JSON.parse(answer.body.toString()).choices[0].finish_reason).toBe(finish);
  });
});

describe('bedrock streams', () => {
  const stream = eventStream(fixture('tool-stream.json') as { event: string; payload: unknown }[]);

  it.each([1, 7, 64, 100_000])(
    'translates every event in order, with tool-call argument deltas and the usage chunk, fed %i bytes at a time',
    (size) => {
      const translator = bedrockAdapter.chatStream(context);
      const events = translate(translator, stream, size) as Chunk[];
      const deltas = events.slice(0, -2).map((event) => event.choices[0]!.delta);
      expect(deltas).toEqual([
        { role: 'assistant', content: '' },
        { content: 'Let me check ' },
        { content: 'WZPZ — één moment.' },
        {
          tool_calls: [
            {
              index: 0,
              id: 'tooluse_1',
              type: 'function',
              function: { name: 'top_song', arguments: '' },
            },
          ],
        },
        { tool_calls: [{ index: 0, function: { arguments: '{"si' } }] },
        { tool_calls: [{ index: 0, function: { arguments: 'gn": "WZPZ"}' } }] },
        {
          tool_calls: [
            {
              index: 1,
              id: 'tooluse_2',
              type: 'function',
              function: { name: 'top_song', arguments: '' },
            },
          ],
        },
        { tool_calls: [{ index: 1, function: { arguments: '{"sign": "WKRP"}' } }] },
        {},
      ]);
      expect(events.at(-3)!.choices[0]!.finish_reason).toBe('tool_calls');
      expect(events.at(-2)).toMatchObject({
        choices: [],
        usage: {
          prompt_tokens: 495,
          completion_tokens: 56,
          total_tokens: 551,
          prompt_tokens_details: { cached_tokens: 100 },
        },
      });
      expect(events.at(-1)).toBe('[DONE]');
      expect(translator.usage).toEqual({
        promptTokens: 495,
        completionTokens: 56,
        cachedTokens: 100,
      });
      expect(translator.failure).toBeNull();
    },
  );

  it('closes the stream once both messageStop and metadata are in, whichever comes first', () => {
    const events = fixture('tool-stream.json') as { event: string; payload: unknown }[];
    const swapped = [...events.slice(0, -2), events.at(-1)!, events.at(-2)!];
    const translator = bedrockAdapter.chatStream(context);
    const out = translate(translator, eventStream(swapped), 64) as Chunk[];
    expect(out.at(-3)!.choices[0]!.finish_reason).toBe('tool_calls');
    expect(out.at(-2)!.usage).toMatchObject({ completion_tokens: 56 });
    expect(out.at(-1)).toBe('[DONE]');
    expect(translator.failure).toBeNull();
  });

  it('meters the usage without a usage chunk when the client did not ask for it', () => {
    const translator = bedrockAdapter.chatStream({ ...context, includeUsage: false });
    const events = translate(translator, stream, 50) as Chunk[];
    expect(events.some((event) => (event as unknown) !== '[DONE]' && event.usage)).toBe(false);
    expect(translator.usage?.completionTokens).toBe(56);
  });

  it('ends with stream_interrupted on an exception frame or a stream cut before messageStop or metadata', () => {
    const events = fixture('tool-stream.json') as { event: string; payload: unknown }[];
    const throttled = Buffer.concat([
      eventStream(events.slice(0, 2)),
      frame(
        {
          ':exception-type': 'throttlingException',
          ':content-type': 'application/json',
          ':message-type': 'exception',
        },
        { message: 'Too many requests, please wait before trying again.' },
      ),
    ]);
    let translator = bedrockAdapter.chatStream(context);
    let out = translate(translator, throttled, 13) as Chunk[];
    expect(out.at(-1)!.error).toMatchObject({ code: 'stream_interrupted' });
    expect(translator.failure).toMatch(/throttlingException: Too many requests/);

    translator = bedrockAdapter.chatStream(context);
    out = translate(translator, eventStream(events.slice(0, 5)), 13) as Chunk[];
    expect(translator.failure).toMatch(/before messageStop/);
    expect(out).not.toContain('[DONE]');

    translator = bedrockAdapter.chatStream(context);
    translate(translator, eventStream(events.slice(0, -1)), 13);
    expect(translator.failure).toMatch(/before its usage metadata/);

    translator = bedrockAdapter.chatStream(context);
    const corrupt = eventStream(events.slice(0, 2));
    corrupt.writeUInt8(corrupt.readUInt8(corrupt.length - 10) ^ 0xff, corrupt.length - 10);
    translate(translator, corrupt, 100);
    expect(translator.failure).toMatch(/malformed event stream frame/);
  });
});

describe('bedrock errors', () => {
  it.each([
    [400, 'ValidationException', 'invalid_request_error', 400],
    [403, 'AccessDeniedException', 'permission_error', 403],
    [429, 'ThrottlingException', 'rate_limit_error', 429],
    [424, 'ModelErrorException', 'server_error', 502],
    [503, 'ServiceUnavailableException', 'server_error', 503],
  ])('turns a %i into OpenAI error %s and health status %i', (status, code, type, health) => {
    const body = Buffer.from(JSON.stringify({ message: 'Something went wrong.' }));
    const error = JSON.parse(bedrockAdapter.error(status, body).body.toString());
    expect(error).toEqual({ error: { message: 'Something went wrong.', type, param: null, code } });
    expect(bedrockAdapter.healthStatus(status, body)).toBe(health);
  });

  it('keeps the error name AWS puts in the body', () => {
    const body = Buffer.from(
      JSON.stringify({
        __type: 'com.amazon.coral.service#UnrecognizedClientException',
        message: 'The security token included in the request is invalid.',
      }),
    );
    expect(JSON.parse(bedrockAdapter.error(403, body).body.toString()).error.code).toBe(
      'UnrecognizedClientException',
    );
  });
});
