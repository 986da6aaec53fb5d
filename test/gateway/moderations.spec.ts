import OpenAI from 'openai';
import {
  lastSent,
  providerChannel,
  usageRow,
  useProviderGateway,
  type ProviderChannel,
} from '../support/provider-gateway.js';

// OpenAI's moderations in front of the gateway (docs/providers.md, "Moderations"), with the
// openai SDK: an openai channel gets the client's bytes; the answer reports no usage, so
// metering counts the input with its tokenizer and bills it at the model's input price.
// Other providers have no moderations, and are refused.

describe('gateway: moderations (/v1/moderations)', () => {
  const gateway = useProviderGateway();
  const { stack } = gateway;
  let gpt: ProviderChannel;

  beforeAll(async () => {
    gpt = await providerChannel(gateway, {
      prefix: 'modr-gpt',
      provider: 'openai',
      upstreamModel: 'omni-moderation-latest',
    });
  });

  it('answers a verdict per input, billed by its input tokens', async () => {
    const { data, response } = await gateway.openai.moderations
      .create({ model: gpt.model, input: ['I will kill the process', 'a kind word'] })
      .withResponse();
    expect(data.model).toBe('omni-moderation-latest');
    expect(data.results.map((r) => r.flagged)).toEqual([true, false]);
    expect(data.results[0]!.categories.violence).toBe(true);
    const sent = await lastSent(stack, gpt.account);
    expect(sent.path).toBe('/v1/moderations');
    expect(sent.body).toEqual({
      model: 'omni-moderation-latest',
      input: ['I will kill the process', 'a kind word'],
    });
    const row = await usageRow(stack, response.headers.get('x-request-id')!);
    expect(row).toMatchObject({
      endpoint: 'moderations',
      completionTokens: 0,
      tokensCounted: true,
      status: 200,
      stream: false,
      channelId: gpt.channelId,
    });
    expect(row.promptTokens).toBeGreaterThan(0);
    // 1 USD per million input tokens.
    expect(row.cost).toBe(String(row.promptTokens));
  });

  it('reads the text of multimodal parts', async () => {
    const data = await gateway.openai.moderations.create({
      model: gpt.model,
      input: [
        { type: 'text', text: 'steal it' },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      ],
    });
    expect(data.results[0]!.categories.illicit).toBe(true);
  });

  it("refuses an input that is none, in OpenAI's error shape", async () => {
    const error = await gateway.openai.moderations
      .create({ model: gpt.model, input: [] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'input',
    });
    expect(
      await usageRow(stack, (error as InstanceType<typeof OpenAI.APIError>).requestID!),
    ).toMatchObject({
      endpoint: 'moderations',
      status: 400,
      cost: '0',
    });
  });

  it('refuses a model only a provider without moderations serves', async () => {
    const gemini = await providerChannel(gateway, {
      prefix: 'modr-gemini',
      provider: 'gemini',
      upstreamModel: 'gemini-2.5-flash',
    });
    const error = await gateway.openai.moderations
      .create({ model: gemini.model, input: 'hello' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(
      /gemini channel, which does not offer moderations/,
    );
    expect(await stack.mockRequests(gemini.account)).toEqual([]);
  });
});
