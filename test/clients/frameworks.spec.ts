import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatAnthropic } from '@langchain/anthropic';
import { tool as langchainTool } from '@langchain/core/tools';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { APICallError, Output, embed, generateText, stepCountIs, streamText, tool } from 'ai';
import { query, waitFor } from '@switchyard/testing';
import { z } from 'zod';
import {
  providerChannel,
  useProviderGateway,
  type ProviderChannel,
} from '../support/provider-gateway.js';
import { type Stack } from '../support/stack.js';

// The frameworks people build on, pointed at the gateway and otherwise unchanged: the Vercel
// AI SDK with its openai, anthropic and openai-compatible providers, and LangChain's
// ChatOpenAI, ChatAnthropic and OpenAIEmbeddings. Each request must work as it does against
// the provider, and leave its usage row (docs/providers.md).

interface Row {
  endpoint: string;
  promptTokens: number;
  completionTokens: number;
  stream: boolean;
  status: number;
}

/** The usage rows of a channel, once metering has settled `count` of them. */
async function rowsOf(stack: Stack, channel: ProviderChannel, count: number): Promise<Row[]> {
  return waitFor(
    async () => {
      const rows = await query<Row>(
        stack.databaseUrl,
        `SELECT endpoint, "promptTokens", "completionTokens", stream, status
           FROM "UsageLog" WHERE "channelId" = $1 ORDER BY "requestedAt", id`,
        [channel.channelId],
      );
      return rows.length >= count ? rows : undefined;
    },
    { what: `${count} usage row(s) of channel ${channel.channelId}` },
  );
}

const weatherArguments = { city: 'Paris' };

/** What the structured-output cases ask for: the mock answers with a value valid against it. */
const forecastSchema = z.object({
  city: z.string(),
  celsius: z.number().int().min(-60).max(60),
  sky: z.enum(['clear', 'cloudy', 'rain']),
});
const weatherPrompt = `Call get_weather with ${JSON.stringify(weatherArguments)}`;

describe('clients: frameworks against the gateway', () => {
  const gateway = useProviderGateway();
  const { stack } = gateway;
  const v1 = () => `${stack.edge.url}/v1`;
  const channel = (prefix: string, provider: 'openai' | 'anthropic' = 'openai') =>
    providerChannel(gateway, {
      prefix,
      provider,
      upstreamModel: provider === 'openai' ? 'gpt-4o-mini' : 'claude-sonnet-4-5-20250929',
    });

  describe('Vercel AI SDK', () => {
    const openai = () => createOpenAI({ baseURL: v1(), apiKey: gateway.token.key });
    const anthropic = () => createAnthropic({ baseURL: v1(), apiKey: gateway.token.key });

    it('openai chat model: text and usage, metered', async () => {
      const target = await channel('ai-chat');
      const result = await generateText({
        model: openai().chat(target.model),
        prompt: 'hello from the ai sdk',
        maxRetries: 0,
      });
      expect(result.text).toContain('hello from the ai sdk');
      expect(result.usage.inputTokens).toBeGreaterThan(0);
      const [row] = await rowsOf(stack, target, 1);
      expect(row).toMatchObject({
        endpoint: 'chat.completions',
        stream: false,
        status: 200,
        promptTokens: result.usage.inputTokens,
        completionTokens: result.usage.outputTokens,
      });
    });

    it('openai chat model: a streamed text with its usage', async () => {
      const target = await channel('ai-stream');
      const result = streamText({
        model: openai().chat(target.model),
        prompt: 'stream through the ai sdk',
        maxRetries: 0,
      });
      let text = '';
      for await (const delta of result.textStream) text += delta;
      expect(text).toContain('stream through the ai sdk');
      const usage = await result.usage;
      expect(usage.inputTokens).toBeGreaterThan(0);
      const [row] = await rowsOf(stack, target, 1);
      expect(row).toMatchObject({
        endpoint: 'chat.completions',
        stream: true,
        promptTokens: usage.inputTokens,
        completionTokens: usage.outputTokens,
      });
    });

    it('openai chat model: a tool loop of two steps, each metered', async () => {
      const target = await channel('ai-tools');
      const calls: unknown[] = [];
      const result = await generateText({
        model: openai().chat(target.model),
        prompt: weatherPrompt,
        tools: {
          get_weather: tool({
            description: 'Weather in a city',
            inputSchema: z.object({ city: z.string() }),
            execute: (input) => {
              calls.push(input);
              return Promise.resolve('Sunny, 21 C');
            },
          }),
        },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
      });
      expect(calls).toEqual([weatherArguments]);
      expect(result.text).toBe('The tool answered: Sunny, 21 C');
      expect(result.steps).toHaveLength(2);
      const rows = await rowsOf(stack, target, 2);
      expect(rows.map((row) => row.endpoint)).toEqual(['chat.completions', 'chat.completions']);
    });

    it('openai chat model: structured output against a JSON schema', async () => {
      const target = await channel('ai-object');
      const result = await generateText({
        model: openai().chat(target.model),
        prompt: 'The forecast for Paris, as an object.',
        output: Output.object({ schema: forecastSchema }),
        maxRetries: 0,
      });
      expect(forecastSchema.safeParse(result.output).success).toBe(true);
      await rowsOf(stack, target, 1);
    });

    it('anthropic provider: structured output through /v1/messages to an anthropic channel', async () => {
      const target = await channel('ai-anthropic-object', 'anthropic');
      const result = await generateText({
        model: createAnthropic({ baseURL: v1(), apiKey: gateway.token.key })(target.model),
        prompt: 'The forecast for Paris, as an object.',
        output: Output.object({ schema: forecastSchema }),
        maxRetries: 0,
      });
      expect(forecastSchema.safeParse(result.output).success).toBe(true);
      const [row] = await rowsOf(stack, target, 1);
      expect(row).toMatchObject({ endpoint: 'messages', status: 200 });
    });

    it('openai responses model: text through the Responses API', async () => {
      const target = await channel('ai-responses');
      const result = await generateText({
        model: openai().responses(target.model),
        prompt: 'hello responses from the ai sdk',
        maxRetries: 0,
      });
      expect(result.text).toContain('hello responses from the ai sdk');
      const [row] = await rowsOf(stack, target, 1);
      expect(row).toMatchObject({ endpoint: 'responses', status: 200 });
      expect(row!.promptTokens).toBe(result.usage.inputTokens);
    });

    it('openai embedding model: a vector, metered', async () => {
      const target = await channel('ai-embed');
      const { embedding, usage } = await embed({
        model: openai().embeddingModel(target.model),
        value: 'a sentence to embed',
        maxRetries: 0,
      });
      expect(embedding.length).toBeGreaterThan(0);
      const [row] = await rowsOf(stack, target, 1);
      expect(row).toMatchObject({ endpoint: 'embeddings', promptTokens: usage.tokens });
    });

    it('anthropic provider: text and a stream through /v1/messages, converted for an openai channel', async () => {
      const target = await channel('ai-anthropic');
      const result = await generateText({
        model: anthropic()(target.model),
        prompt: 'hello claude from the ai sdk',
        maxRetries: 0,
      });
      expect(result.text).toContain('hello claude from the ai sdk');
      const streamed = streamText({
        model: anthropic()(target.model),
        prompt: 'stream claude from the ai sdk',
        maxRetries: 0,
      });
      let text = '';
      for await (const delta of streamed.textStream) text += delta;
      expect(text).toContain('stream claude from the ai sdk');
      const usage = await streamed.usage;
      expect(usage.inputTokens).toBeGreaterThan(0);
      const rows = await rowsOf(stack, target, 2);
      expect(rows.map(({ endpoint, stream }) => ({ endpoint, stream }))).toEqual([
        { endpoint: 'messages', stream: false },
        { endpoint: 'messages', stream: true },
      ]);
      expect(rows[1]!.promptTokens).toBe(usage.inputTokens);
    });

    it('openai-compatible provider: text and a stream', async () => {
      const target = await channel('ai-compatible', 'anthropic');
      const compatible = createOpenAICompatible({
        name: 'switchyard',
        baseURL: v1(),
        apiKey: gateway.token.key,
        includeUsage: true,
      });
      const result = await generateText({
        model: compatible(target.model),
        prompt: 'hello compatible',
        maxRetries: 0,
      });
      expect(result.text).toContain('hello compatible');
      const streamed = streamText({
        model: compatible(target.model),
        prompt: 'stream compatible',
        maxRetries: 0,
      });
      let text = '';
      for await (const delta of streamed.textStream) text += delta;
      expect(text).toContain('stream compatible');
      expect((await streamed.usage).inputTokens).toBeGreaterThan(0);
      const rows = await rowsOf(stack, target, 2);
      expect(rows.map((row) => row.stream)).toEqual([false, true]);
    });

    it("reads the gateway's errors: an unknown model is a 404 it does not retry", async () => {
      const error = await generateText({
        model: openai().chat('no-such-model-anywhere'),
        prompt: 'hello',
      }).catch((caught: unknown) => caught);
      expect(APICallError.isInstance(error)).toBe(true);
      const failure = error as APICallError;
      expect(failure.statusCode).toBe(404);
      expect(failure.isRetryable).toBe(false);
      expect(failure.message).toMatch(/no-such-model-anywhere/);
    });
  });

  describe('LangChain', () => {
    it('ChatOpenAI: invoke and stream, with usage metadata, metered', async () => {
      const target = await channel('lc-openai');
      const model = new ChatOpenAI({
        model: target.model,
        apiKey: gateway.token.key,
        configuration: { baseURL: v1() },
        maxRetries: 0,
      });
      const answer = await model.invoke('hello langchain');
      expect(answer.content).toContain('hello langchain');
      expect(answer.usage_metadata?.input_tokens).toBeGreaterThan(0);
      let streamed = '';
      let streamedInput = 0;
      for await (const chunk of await model.stream('stream langchain')) {
        streamed += typeof chunk.content === 'string' ? chunk.content : '';
        streamedInput += chunk.usage_metadata?.input_tokens ?? 0;
      }
      expect(streamed).toContain('stream langchain');
      expect(streamedInput).toBeGreaterThan(0);
      const rows = await rowsOf(stack, target, 2);
      expect(rows.map((row) => row.stream)).toEqual([false, true]);
      expect(rows[0]!.promptTokens).toBe(answer.usage_metadata!.input_tokens);
    });

    it('ChatOpenAI with tools: the call and its arguments', async () => {
      const target = await channel('lc-tools');
      const getWeather = langchainTool(() => 'Sunny, 21 C', {
        name: 'get_weather',
        description: 'Weather in a city',
        schema: z.object({ city: z.string() }),
      });
      const model = new ChatOpenAI({
        model: target.model,
        apiKey: gateway.token.key,
        configuration: { baseURL: v1() },
        maxRetries: 0,
      }).bindTools([getWeather]);
      const answer = await model.invoke(weatherPrompt);
      expect(answer.tool_calls).toEqual([
        expect.objectContaining({ name: 'get_weather', args: weatherArguments }),
      ]);
      await rowsOf(stack, target, 1);
    });

    it('withStructuredOutput: ChatOpenAI and ChatAnthropic answer objects valid against the schema', async () => {
      const gpt = await channel('lc-object');
      const claude = await channel('lc-anthropic-object', 'anthropic');
      const fromOpenAI = await new ChatOpenAI({
        model: gpt.model,
        apiKey: gateway.token.key,
        configuration: { baseURL: v1() },
        maxRetries: 0,
      })
        .withStructuredOutput(forecastSchema)
        .invoke('The forecast for Paris, as an object.');
      expect(forecastSchema.safeParse(fromOpenAI).success).toBe(true);
      const fromAnthropic = await new ChatAnthropic({
        model: claude.model,
        apiKey: gateway.token.key,
        anthropicApiUrl: stack.edge.url,
        maxRetries: 0,
      })
        .withStructuredOutput(forecastSchema)
        .invoke('The forecast for Paris, as an object.');
      expect(forecastSchema.safeParse(fromAnthropic).success).toBe(true);
      await rowsOf(stack, gpt, 1);
      await rowsOf(stack, claude, 1);
    });

    it('ChatAnthropic: invoke and stream through /v1/messages', async () => {
      const target = await channel('lc-anthropic', 'anthropic');
      const model = new ChatAnthropic({
        model: target.model,
        apiKey: gateway.token.key,
        anthropicApiUrl: stack.edge.url,
        maxRetries: 0,
      });
      const answer = await model.invoke('hello claude from langchain');
      expect(answer.content).toContain('hello claude from langchain');
      expect(answer.usage_metadata?.input_tokens).toBeGreaterThan(0);
      let streamed = '';
      for await (const chunk of await model.stream('stream claude from langchain')) {
        streamed += typeof chunk.content === 'string' ? chunk.content : '';
      }
      expect(streamed).toContain('stream claude from langchain');
      const rows = await rowsOf(stack, target, 2);
      expect(rows.map(({ endpoint, stream }) => ({ endpoint, stream }))).toEqual([
        { endpoint: 'messages', stream: false },
        { endpoint: 'messages', stream: true },
      ]);
    });

    it('OpenAIEmbeddings: a query and documents', async () => {
      const target = await channel('lc-embed');
      const embeddings = new OpenAIEmbeddings({
        model: target.model,
        apiKey: gateway.token.key,
        configuration: { baseURL: v1() },
        maxRetries: 0,
      });
      expect((await embeddings.embedQuery('one sentence')).length).toBeGreaterThan(0);
      expect(await embeddings.embedDocuments(['first', 'second'])).toHaveLength(2);
      const rows = await rowsOf(stack, target, 2);
      expect(rows.every((row) => row.endpoint === 'embeddings')).toBe(true);
    });
  });
});
