import { readFileSync } from 'node:fs';
import type { AnswerContext } from '../adapter.js';
import { translate } from '../stream.fixture.js';
import { azureAdapter } from './azure.adapter.js';

// Fixtures follow the examples of the Azure OpenAI reference (chat completions, content
// filtering, error responses): its stream opens with the prompt's filter results.

const context: AnswerContext = { model: 'gpt-4o', includeUsage: true, created: 1_700_000_000 };
const stream = readFileSync(new URL('./fixtures/stream.sse', import.meta.url));

function outbound(body: Record<string, unknown>, stream: boolean, apiVersion?: string) {
  const request = azureAdapter.chatRequest(
    {
      body,
      upstreamModel: 'gpt-4o-prod',
      secret: 'azure-key',
      settings: apiVersion ? { apiVersion } : {},
    },
    stream,
  );
  return { ...request, json: JSON.parse(request.body.toString()) as Record<string, unknown> };
}

describe('azure requests', () => {
  it("sends OpenAI's body to the deployment path with the api-key header and api-version", () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }], seed: 1 };
    const plain = outbound(body, false, '2025-04-01-preview');
    expect(plain.path).toBe(
      '/openai/deployments/gpt-4o-prod/chat/completions?api-version=2025-04-01-preview',
    );
    expect(plain.headers).toEqual({ 'api-key': 'azure-key' });
    expect(plain.json).toEqual({ ...body, model: 'gpt-4o-prod' });
    expect(outbound(body, false).path).toMatch(/\?api-version=2024-10-21$/);
  });

  it('asks for stream usage when the API version can report it, keeping the client’s options', () => {
    const body = { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'Hi' }] };
    expect(outbound(body, true).json.stream_options).toEqual({ include_usage: true });
    expect(outbound(body, true, '2024-06-01').json.stream_options).toBeUndefined();
  });

  it('sends embeddings to the deployment and returns the answer as Azure sent it', () => {
    const embeddings = azureAdapter.embeddings!;
    const request = embeddings.request({
      body: { model: 'text-embedding-3-small', input: 'hello' },
      upstreamModel: 'embed-prod',
      secret: 'azure-key',
      settings: { apiVersion: '2024-10-21' },
    });
    expect(request.path).toBe('/openai/deployments/embed-prod/embeddings?api-version=2024-10-21');
    expect(JSON.parse(request.body.toString())).toEqual({ model: 'embed-prod', input: 'hello' });
    const answer = Buffer.from('{"object":"list","data":[],"usage":{"prompt_tokens":1}}');
    expect(embeddings.answer(answer, context)).toBe(answer);
  });
});

describe('azure answers', () => {
  it('passes the JSON answer through and reads its usage and text', () => {
    const body = Buffer.from(
      JSON.stringify({
        id: 'chatcmpl-6v7mkQj980V1yBec6ETrKPRqFjNw9',
        object: 'chat.completion',
        created: 1679072642,
        model: 'gpt-4o-2024-08-06',
        prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }],
        choices: [
          {
            index: 0,
            finish_reason: 'stop',
            message: {
              role: 'assistant',
              content: 'Yes, other Azure AI services also support customer managed keys.',
            },
            content_filter_results: {},
          },
        ],
        usage: {
          prompt_tokens: 58,
          completion_tokens: 68,
          total_tokens: 126,
          prompt_tokens_details: { cached_tokens: 32 },
        },
      }),
    );
    const answer = azureAdapter.chatAnswer(body, context);
    expect(answer.body).toBe(body);
    expect(answer.usage).toEqual({ promptTokens: 58, completionTokens: 68, cachedTokens: 32 });
    expect(answer.model).toBe('gpt-4o-2024-08-06');
    expect(answer.completionText).toMatch(/^Yes, other Azure/);
  });
});

describe('azure streams', () => {
  const choicesOf = (events: unknown[]) =>
    events.filter(
      (e): e is { id: string; choices: unknown[] } => typeof e === 'object' && e !== null,
    );

  it('drops the prompt-filter announcement, keeps every chunk in order and the usage chunk the client asked for', () => {
    for (const size of [1, 9, 4096]) {
      const translator = azureAdapter.chatStream(context);
      const events = translate(translator, stream, size);
      expect(events).toHaveLength(5);
      expect(choicesOf(events).every((e) => e.id === 'chatcmpl-ABC123')).toBe(true);
      expect(events.slice(-2)).toEqual([
        expect.objectContaining({
          choices: [],
          usage: {
            completion_tokens: 2,
            prompt_tokens: 20,
            total_tokens: 22,
            prompt_tokens_details: { cached_tokens: 0 },
          },
        }),
        '[DONE]',
      ]);
      expect(translator.usage).toEqual({ promptTokens: 20, completionTokens: 2, cachedTokens: 0 });
      expect(translator.failure).toBeNull();
    }
  });

  it('meters the usage the gateway asked for without showing it to a client that did not', () => {
    const translator = azureAdapter.chatStream({ ...context, includeUsage: false });
    const events = translate(translator, stream, 50);
    expect(events).toHaveLength(4);
    expect(choicesOf(events).some((e) => 'usage' in e)).toBe(false);
    expect(translator.usage).toEqual({ promptTokens: 20, completionTokens: 2, cachedTokens: 0 });
  });

  it('ends a stream cut before [DONE] with the interruption event', () => {
    const translator = azureAdapter.chatStream(context);
    const cut = stream.subarray(0, stream.indexOf('"finish_reason":"stop"'));
    expect(translate(translator, cut, 100).at(-1)).toMatchObject({
      error: { code: 'stream_interrupted' },
    });
    expect(translator.failure).toMatch(/\[DONE\]/);
  });
});

describe('azure errors', () => {
  it("renders Azure's error bodies in OpenAI's shape; a missing deployment fails over", () => {
    const error = (status: number, body: unknown) =>
      JSON.parse(azureAdapter.error(status, Buffer.from(JSON.stringify(body))).body.toString());
    expect(
      error(400, {
        error: {
          message:
            "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
          type: null,
          param: 'prompt',
          code: 'content_filter',
          status: 400,
          innererror: { code: 'ResponsibleAIPolicyViolation' },
        },
      }),
    ).toEqual({
      error: {
        message:
          "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
        type: 'invalid_request_error',
        param: 'prompt',
        code: 'content_filter',
      },
    });
    expect(
      error(401, {
        error: {
          code: '401',
          message: 'Access denied due to invalid subscription key or wrong API endpoint.',
        },
      }).error,
    ).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    expect(
      error(429, {
        error: {
          code: '429',
          message: 'Requests have exceeded token rate limit. Please retry after 6 seconds.',
        },
      }).error,
    ).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(
      error(404, {
        error: {
          code: 'DeploymentNotFound',
          message: 'The API deployment for this resource does not exist.',
        },
      }).error,
    ).toMatchObject({ code: 'DeploymentNotFound' });
    expect(azureAdapter.healthStatus(404, Buffer.alloc(0))).toBe(502);
    expect(azureAdapter.healthStatus(429, Buffer.alloc(0))).toBe(429);
    expect(azureAdapter.healthStatus(401, Buffer.alloc(0))).toBe(401);
  });
});
