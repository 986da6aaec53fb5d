import { waitFor } from '@switchyard/testing';
import OpenAI from 'openai';
import {
  lastSent,
  providerChannel,
  usageRow,
  useProviderGateway,
  type ProviderChannel,
  type UsageRow,
} from '../support/provider-gateway.js';
import { freshAccount } from '../support/stack.js';

// OpenAI's legacy text completions in front of the gateway (docs/providers.md, "Legacy
// completions"), with the openai SDK: passed through to an openai channel, JSON and
// streamed, metered from the upstream's usage; a channel of another provider is passed
// over, and its refusal is the answer only when no channel could serve it.

/** What the test models cost, per million tokens: 1 USD in, 2 USD out. */
function expectedCost(row: UsageRow): string {
  return String(Math.ceil(row.promptTokens * 1 + row.completionTokens * 2));
}

describe('gateway: legacy completions (/v1/completions)', () => {
  const gateway = useProviderGateway();
  const { stack } = gateway;
  let gpt: ProviderChannel;

  beforeAll(async () => {
    gpt = await providerChannel(gateway, {
      prefix: 'cmpl-gpt',
      provider: 'openai',
      upstreamModel: 'gpt-3.5-turbo-instruct',
    });
  });

  it('answers a prompt in the text_completion shape, metered from its usage', async () => {
    const { data, response } = await gateway.openai.completions
      .create({ model: gpt.model, prompt: 'Say this is a test', max_tokens: 20 })
      .withResponse();
    expect(data).toMatchObject({ object: 'text_completion', model: 'gpt-3.5-turbo-instruct' });
    expect(data.choices).toHaveLength(1);
    expect(typeof data.choices[0]!.text).toBe('string');
    const sent = await lastSent(stack, gpt.account);
    expect(sent.path).toBe('/v1/completions');
    expect(sent.body).toEqual({
      model: 'gpt-3.5-turbo-instruct',
      prompt: 'Say this is a test',
      max_tokens: 20,
    });
    const row = await usageRow(stack, response.headers.get('x-request-id')!);
    expect(row).toMatchObject({
      endpoint: 'completions',
      promptTokens: data.usage!.prompt_tokens,
      completionTokens: data.usage!.completion_tokens,
      tokensCounted: false,
      status: 200,
      stream: false,
      channelId: gpt.channelId,
    });
    expect(row.cost).toBe(expectedCost(row));
  });

  it('answers a list of prompts with a choice each', async () => {
    const data = await gateway.openai.completions.create({
      model: gpt.model,
      prompt: ['first', 'second'],
      n: 2,
    });
    expect(data.choices.map((c) => c.index).sort()).toEqual([0, 1, 2, 3]);
  });

  it('streams chunks; the usage it did not ask for is metered but not relayed', async () => {
    const { data: stream, response } = await gateway.openai.completions
      .create({ model: gpt.model, prompt: 'stream me', stream: true })
      .withResponse();
    let text = '';
    const chunks: OpenAI.Completions.Completion[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.text ?? '';
    }
    expect(text.length).toBeGreaterThan(0);
    expect(chunks.every((c) => c.object === 'text_completion' && !c.usage)).toBe(true);
    // The gateway asked for the usage chunk itself.
    expect((await lastSent(stack, gpt.account)).body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    const row = await usageRow(stack, response.headers.get('x-request-id')!);
    expect(row).toMatchObject({
      endpoint: 'completions',
      stream: true,
      status: 200,
      tokensCounted: false,
    });
    expect(row.promptTokens).toBeGreaterThan(0);
    expect(row.completionTokens).toBeGreaterThan(0);
    expect(row.cost).toBe(expectedCost(row));
  });

  it('relays the usage chunk when the client asks for it', async () => {
    const stream = await gateway.openai.completions.create({
      model: gpt.model,
      prompt: 'count me',
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.Completions.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it("refuses a body that is not a completion request in OpenAI's error shape, metered as such", async () => {
    const error = await gateway.openai.completions
      .create({ model: gpt.model, prompt: { not: 'a prompt' } as unknown as string })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'prompt',
      code: 'invalid_request',
    });
    const row = await usageRow(stack, (error as InstanceType<typeof OpenAI.APIError>).requestID!);
    expect(row).toMatchObject({ endpoint: 'completions', status: 400, cost: '0' });
  });

  it('passes over a channel whose provider has no completions, to one that has', async () => {
    const claude = await providerChannel(gateway, {
      prefix: 'cmpl-claude',
      provider: 'anthropic',
      upstreamModel: 'claude-sonnet-4-5-20250929',
    });
    const refused = await gateway.openai.completions
      .create({ model: claude.model, prompt: 'hi' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(
      /anthropic channel, which does not offer the legacy completions API/,
    );

    const backup = await freshAccount(stack);
    const { id } = await stack.createChannel({
      models: [claude.model],
      keys: [backup],
      provider: 'openai',
      priority: -1,
      modelMapping: { [claude.model]: 'gpt-3.5-turbo-instruct' },
    });
    await stack.routable(gateway.token.key, claude.model);
    // Until the router's snapshot lists the new channel, the model's only channel refuses.
    const response = await waitFor(
      async () =>
        (
          await gateway.openai.completions
            .create({ model: claude.model, prompt: 'hi' })
            .withResponse()
            .catch(() => null)
        )?.response,
      { what: 'the openai channel to serve the model' },
    );
    expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
      endpoint: 'completions',
      status: 200,
      channelId: id,
    });
    expect(await stack.mockRequests(claude.account)).toEqual([]);
  });
});
