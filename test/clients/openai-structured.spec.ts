import OpenAI from 'openai';
import { z } from 'zod';
import {
  providerChannel,
  usageRow,
  useProviderGateway,
  type ProviderChannel,
} from '../support/provider-gateway.js';

// Structured output as the official openai SDK asks for it: `response_format` of type
// `json_schema` on chat completions, `text.format` on the Responses API, against an openai
// channel (as sent) and a gemini one (converted); the answer must be an object valid
// against the schema, and each request has its usage row. Anthropic has no such format: a
// channel of it refuses the field by name before anything is sent (docs/providers.md,
// "Where the conversion sits"), which the SDK raises as a 400.

const forecast = z.object({
  city: z.string(),
  days: z.array(z.object({ day: z.string(), high: z.number(), sunny: z.boolean() })),
  unit: z.enum(['C', 'F']),
});

const FORECAST_SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    days: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          day: { type: 'string' },
          high: { type: 'number' },
          sunny: { type: 'boolean' },
        },
        required: ['day', 'high', 'sunny'],
        additionalProperties: false,
      },
    },
    unit: { type: 'string', enum: ['C', 'F'] },
  },
  required: ['city', 'days', 'unit'],
  additionalProperties: false,
};

describe('clients: the openai SDK asks for JSON valid against a schema', () => {
  const gateway = useProviderGateway();
  const channels: Record<string, ProviderChannel> = {};

  beforeAll(async () => {
    for (const [provider, upstreamModel] of [
      ['openai', 'gpt-4o-mini'],
      ['anthropic', 'claude-sonnet-4-5-20250929'],
      ['gemini', 'gemini-2.5-flash'],
    ] as const)
      channels[provider] = await providerChannel(gateway, {
        prefix: `structured-${provider}`,
        provider,
        upstreamModel,
      });
  });

  it.each(['openai', 'gemini'])(
    'chat completions with response_format json_schema on a %s channel',
    async (provider) => {
      const target = channels[provider]!;
      const { data, response } = await gateway.openai.chat.completions
        .create({
          model: target.model,
          messages: [{ role: 'user', content: 'The forecast for Paris, as JSON.' }],
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'forecast', strict: true, schema: FORECAST_SCHEMA },
          },
        })
        .withResponse();
      const content = data.choices[0]!.message.content!;
      expect(forecast.safeParse(JSON.parse(content)).success).toBe(true);
      const row = await usageRow(gateway.stack, response.headers.get('x-request-id')!);
      expect(row).toMatchObject({
        endpoint: 'chat.completions',
        status: 200,
        channelId: target.channelId,
      });
      expect(row.promptTokens).toBeGreaterThan(0);
    },
  );

  it.each(['openai', 'gemini'])(
    'the Responses API with text.format json_schema on a %s channel',
    async (provider) => {
      const target = channels[provider]!;
      const { data, response } = await gateway.openai.responses
        .create({
          model: target.model,
          input: 'The forecast for Paris, as JSON.',
          text: {
            format: {
              type: 'json_schema',
              name: 'forecast',
              strict: true,
              schema: FORECAST_SCHEMA,
            },
          },
        })
        .withResponse();
      expect(forecast.safeParse(JSON.parse(data.output_text)).success).toBe(true);
      const row = await usageRow(gateway.stack, response.headers.get('x-request-id')!);
      expect(row).toMatchObject({
        endpoint: 'responses',
        status: 200,
        channelId: target.channelId,
      });
    },
  );

  it('an anthropic channel refuses the format by name, and nothing is billed', async () => {
    const target = channels.anthropic!;
    const error = await gateway.openai.chat.completions
      .create({
        model: target.model,
        messages: [{ role: 'user', content: 'The forecast for Paris, as JSON.' }],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'forecast', strict: true, schema: FORECAST_SCHEMA },
        },
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const refused = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(refused.param).toBe('response_format');
    const row = await usageRow(gateway.stack, refused.requestID!);
    expect(row).toMatchObject({ status: 400, cost: '0' });
  });
});
