import Anthropic from '@anthropic-ai/sdk';
import { ChatAnthropic } from '@langchain/anthropic';
import OpenAI from 'openai';
import {
  anthropicClient,
  providerChannel,
  useProviderGateway,
} from '../support/provider-gateway.js';

// What the official SDKs and LangChain read besides the body, checked with the SDKs
// themselves (docs/specification.md, "Errors"): whether and when to retry the gateway's own
// refusals, the request id Anthropic's SDK reports, the model list in the caller's shape,
// and the input tokens of a converted Anthropic stream as LangChain counts them.

/** A fetch that counts the requests an SDK sends, retries included. */
function countingFetch(): { fetch: typeof fetch; calls: () => number } {
  let calls = 0;
  return {
    fetch: (input, init) => {
      calls += 1;
      return fetch(input, init);
    },
    calls: () => calls,
  };
}

describe('clients: what SDKs read besides the body', () => {
  const gateway = useProviderGateway();
  const { stack } = gateway;

  it('insufficient_quota says x-should-retry: false, and the openai SDK does not retry it', async () => {
    const target = await providerChannel(gateway, {
      prefix: 'fid-quota',
      provider: 'openai',
      upstreamModel: 'gpt-4o-mini',
    });
    const spent = await stack.createToken({ status: 'exhausted', quota: 1, usedQuota: 1 });
    const counting = countingFetch();
    const client = new OpenAI({
      apiKey: spent.key,
      baseURL: `${stack.edge.url}/v1`,
      maxRetries: 2,
      fetch: counting.fetch,
    });
    const error = await client.chat.completions
      .create({ model: target.model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('insufficient_quota');
    expect(
      (error as InstanceType<typeof OpenAI.RateLimitError>).headers.get('x-should-retry'),
    ).toBe('false');
    expect(counting.calls()).toBe(1);
  });

  it("a token's rate limit says when to come back, in Retry-After and OpenAI's x-ratelimit headers", async () => {
    const target = await providerChannel(gateway, {
      prefix: 'fid-rate',
      provider: 'openai',
      upstreamModel: 'gpt-4o-mini',
    });
    const limited = await stack.createToken({ rateLimit: 1 });
    const send = () =>
      fetch(`${stack.edge.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${limited.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: target.model, messages: [{ role: 'user', content: 'hi' }] }),
      });
    expect((await send()).status).toBe(200);
    const refused = await send();
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(Number(refused.headers.get('retry-after-ms'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('1');
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(refused.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+m)?\d+s$/);
    expect(refused.headers.get('x-should-retry')).toBeNull();
  });

  it("Anthropic's SDK reads an error's request id from request-id", async () => {
    const error = await gateway.anthropic.messages
      .create({
        model: 'no-such-model-anywhere',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'hi' }],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    const requestId = (error as InstanceType<typeof Anthropic.NotFoundError>).requestID;
    expect(requestId).toMatch(/\S/);
  });

  it("lists models in Anthropic's shape to Anthropic's SDK, and in OpenAI's to OpenAI's", async () => {
    const target = await providerChannel(gateway, {
      prefix: 'fid-models',
      provider: 'anthropic',
      upstreamModel: 'claude-sonnet-4-5-20250929',
    });
    const listed: Anthropic.ModelInfo[] = [];
    for await (const model of gateway.anthropic.models.list({ limit: 1 })) listed.push(model);
    expect(listed.find((model) => model.id === target.model)).toEqual({
      type: 'model',
      id: target.model,
      display_name: target.model,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    // One per page: the SDK followed the cursor through every model.
    expect(new Set(listed.map((model) => model.id)).size).toBe(listed.length);
    expect((await gateway.anthropic.models.retrieve(target.model)).type).toBe('model');
    const openAIList = await gateway.openai.models.list();
    expect(openAIList.data.find((model) => model.id === target.model)).toMatchObject({
      object: 'model',
      owned_by: 'switchyard',
    });
    const bearer = anthropicClient(stack, gateway.token.key, { bearer: true });
    expect((await bearer.models.retrieve(target.model)).id).toBe(target.model);
  });

  it("LangChain's ChatAnthropic counts input tokens of a stream converted from an openai channel", async () => {
    const target = await providerChannel(gateway, {
      prefix: 'fid-lc-stream',
      provider: 'openai',
      upstreamModel: 'gpt-4o-mini',
    });
    const model = new ChatAnthropic({
      model: target.model,
      apiKey: gateway.token.key,
      anthropicApiUrl: stack.edge.url,
      maxRetries: 0,
    });
    let input = 0;
    for await (const chunk of await model.stream('count my words as you stream, please'))
      input += chunk.usage_metadata?.input_tokens ?? 0;
    expect(input).toBeGreaterThan(0);
  });
});
