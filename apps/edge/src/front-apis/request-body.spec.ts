import { GatewayError, type GatewayEndpoint } from '@switchyard/contracts';
import { type ParsedBody } from './front-api.js';
import { frontApiOf } from './registry.js';
import { bodyFor } from './request-body.js';

/** A body as the front API of `endpoint` reads it. */
const parseRequestBody = (endpoint: GatewayEndpoint, body: unknown): ParsedBody =>
  frontApiOf(endpoint).parse(body);

const raw = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('parseRequestBody', () => {
  it('reads what routing and metering need from a chat request, keeping the bytes', () => {
    const body = raw({
      model: 'gpt-4o',
      stream: true,
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'image_url', image_url: { url: 'x' } },
          ],
        },
      ],
    });
    const parsed = parseRequestBody('chat.completions', body);
    expect(parsed).toMatchObject({ model: 'gpt-4o', stream: true });
    expect(parsed.raw).toBe(body);
    expect(parsed.estimatedTokens).toBe(Math.ceil(body.length / 4) + 100);
    expect(parsed.promptText()).toBe('hi');
  });

  it.each([
    ['', 'invalid_json', null],
    ['{"model":', 'invalid_json', null],
    ['"text"', 'invalid_request', null],
    [{ messages: [{ role: 'user', content: 'x' }] }, 'invalid_request', 'model'],
    [{ model: 'm', messages: [] }, 'invalid_request', 'messages'],
    [{ model: 'm', messages: [{ content: 'x' }] }, 'invalid_request', 'messages[0].role'],
    [
      { model: 'm', messages: [{ role: 'user', content: { a: 1 } }] },
      'invalid_request',
      'messages[0].content',
    ],
    [
      { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: 1 },
      'invalid_request',
      'stream',
    ],
  ])('refuses %j with %s (param %s)', (body, code, param) => {
    const error = refusal(() => parseRequestBody('chat.completions', raw(body)));
    expect(error.code).toBe(code);
    expect(error.param).toBe(param);
  });

  it('accepts assistant messages without content (tool calls) and content as parts', () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'assistant', content: null, tool_calls: [] },
        { role: 'user', content: [{ type: 'text', text: 'x' }] },
      ],
    };
    expect(() => parseRequestBody('chat.completions', raw(body))).not.toThrow();
  });

  it('checks embeddings and image requests for their own fields', () => {
    expect(parseRequestBody('embeddings', raw({ model: 'e', input: ['a'] })).promptText()).toBe(
      'a',
    );
    expect(
      refusal(() => parseRequestBody('embeddings', raw({ model: 'e', input: [] }))).param,
    ).toBe('input');
    expect(parseRequestBody('images.generations', raw({ prompt: 'a cat' })).model).toBe('dall-e-2');
    expect(
      refusal(() => parseRequestBody('images.generations', raw({ model: 'dall-e-3' }))).param,
    ).toBe('prompt');
  });

  it('reads a Responses request (/v1/responses) whose input is a string', () => {
    const tools = [{ type: 'function', name: 'f', parameters: { type: 'object' } }];
    const body = raw({ model: 'gpt-4o', instructions: 'Be brief.', input: 'hello', tools });
    const parsed = parseRequestBody('responses', body);
    expect(parsed).toMatchObject({ model: 'gpt-4o', stream: false });
    expect(parsed.promptText()).toBe(`Be brief.\nhello\n${JSON.stringify(tools)}`);
    expect(() => parseRequestBody('responses', raw({ model: 'gpt-4o' }))).toThrow(
      "'input' is required.",
    );
  });

  it('reads an Anthropic Messages request (/v1/messages): its budget, stream and prompt text', () => {
    const body = raw({
      model: 'claude-sonnet-4-5',
      max_tokens: 200,
      stream: true,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't', content: 'ok' },
            { type: 'text', text: 'thanks' },
          ],
        },
      ],
    });
    const parsed = parseRequestBody('messages', body);
    expect(parsed).toMatchObject({ model: 'claude-sonnet-4-5', stream: true });
    expect(parsed.raw).toBe(body);
    expect(parsed.estimatedTokens).toBe(Math.ceil(body.length / 4) + 200);
    // The tool use and its result are read too: a provider bills them.
    expect(parsed.promptText()).toBe('Be brief.\nhello\nf{}\nok\nthanks');
  });

  it.each([
    [{ max_tokens: 1, messages: [{ role: 'user', content: 'x' }] }, 'model'],
    [{ model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'max_tokens'],
    [{ model: 'm', max_tokens: 1.5, messages: [{ role: 'user', content: 'x' }] }, 'max_tokens'],
    [{ model: 'm', max_tokens: 1, messages: [] }, 'messages'],
    [
      { model: 'm', max_tokens: 1, messages: [{ role: 'system', content: 'x' }] },
      'messages[0].role',
    ],
    [
      { model: 'm', max_tokens: 1, messages: [{ role: 'user', content: [1] }] },
      'messages[0].content',
    ],
    [
      { model: 'm', max_tokens: 1, system: 5, messages: [{ role: 'user', content: 'x' }] },
      'system',
    ],
    [{ model: 'm', max_tokens: 1, tools: {}, messages: [{ role: 'user', content: 'x' }] }, 'tools'],
    [
      { model: 'm', max_tokens: 1, stream: 'yes', messages: [{ role: 'user', content: 'x' }] },
      'stream',
    ],
  ])('refuses the Anthropic request %j with a 400 naming %s', (body, param) => {
    const error = refusal(() => parseRequestBody('messages', raw(body)));
    expect(error).toMatchObject({ code: 'invalid_request', param });
  });
});

describe('bodyFor', () => {
  it('forwards the bytes as sent unless the channel renames the model', () => {
    const parsed = parseRequestBody(
      'chat.completions',
      raw({ model: 'a', messages: [{ role: 'user', content: 'x' }], extra: 1.5 }),
    );
    expect(bodyFor(parsed, 'a')).toBe(parsed.raw);
    expect(JSON.parse(bodyFor(parsed, 'b').toString())).toEqual({
      model: 'b',
      messages: [{ role: 'user', content: 'x' }],
      extra: 1.5,
    });
  });

  it('names the model for an image request that relied on the default', () => {
    const parsed = parseRequestBody('images.generations', raw({ prompt: 'a cat' }));
    expect(JSON.parse(bodyFor(parsed, 'dall-e-2').toString())).toEqual({
      prompt: 'a cat',
      model: 'dall-e-2',
    });
  });
});
