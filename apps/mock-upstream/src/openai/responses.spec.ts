import Anthropic from '@anthropic-ai/sdk';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, MockUpstreamEnv } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { createService } from '@switchyard/service';
import OpenAI from 'openai';
import { MockUpstreamModule } from '../app.module.js';

// The mock's Responses API as OpenAI's own SDK sees it (its stream helper checks the event
// order and each item's lifecycle), and Anthropic's token count as Anthropic's SDK does.

describe('mock-upstream: Responses API and token counts', () => {
  let app: NestFastifyApplication;
  let baseURL: string;

  beforeAll(async () => {
    const env = loadEnvironment(MockUpstreamEnv, { MOCK_ACCOUNTS: 'sk-a,sk-b' });
    app = await createService(
      {
        name: 'mock-upstream',
        environment: MockUpstreamEnv,
        module: (env) => MockUpstreamModule.forRoot(env),
        port: () => 0,
      },
      env,
      createLogger({ service: 'mock-upstream', level: 'silent' }),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    baseURL = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app.close();
  });

  const openai = (apiKey = 'sk-a') =>
    new OpenAI({ apiKey, baseURL: `${baseURL}/v1`, maxRetries: 0 });

  it('answers a Response, echoing the state fields it does not model', async () => {
    const response = await openai().responses.create({
      model: 'gpt-4o-mini',
      instructions: 'Be brief.',
      input: 'hello there',
      previous_response_id: 'resp_earlier',
      store: true,
    });
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      previous_response_id: 'resp_earlier',
      store: true,
      usage: { input_tokens: 6, output_tokens: 5 },
    });
    expect(response.output_text).toBe('Echo: hello there');
  });

  it('streams text and function calls in the documented order, which the SDK assembles', async () => {
    const text = openai().responses.stream({ model: 'gpt-4o-mini', input: 'stream this' });
    expect((await text.finalResponse()).output_text).toBe('Echo: stream this');

    const tool = openai().responses.stream({
      model: 'gpt-4o-mini',
      input: [{ role: 'user', content: 'weather?' }],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: false,
        },
      ],
    });
    const types: string[] = [];
    tool.on('event', (event) => types.push(event.type));
    const final = await tool.finalResponse();
    expect(final.output).toMatchObject([
      { type: 'function_call', name: 'get_weather', arguments: '{"city":"example city"}' },
    ]);
    expect(types.slice(-3)).toEqual([
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
  });

  it('keeps a Response for the key that made it: read, input listed, background run, cancel, delete', async () => {
    const made = await openai().responses.create({ model: 'gpt-4o-mini', input: 'keep me' });
    expect((await openai().responses.retrieve(made.id)).output_text).toBe('Echo: keep me');
    const items = await openai().responses.inputItems.list(made.id);
    expect(items.data).toMatchObject([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'keep me' }] },
    ]);
    // Another key is another project: the Response is not there.
    await expect(openai('sk-b').responses.retrieve(made.id)).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    // Only a background run can be cancelled.
    await expect(openai().responses.cancel(made.id)).rejects.toBeInstanceOf(OpenAI.BadRequestError);

    const queued = await openai().responses.create({
      model: 'gpt-4o-mini',
      input: 'later',
      background: true,
    });
    expect(queued).toMatchObject({ status: 'queued', background: true, output: [] });
    expect((await openai().responses.cancel(queued.id)).status).toBe('cancelled');

    const streamed = await openai()
      .responses.stream({ model: 'gpt-4o-mini', input: 'streamed' })
      .finalResponse();
    expect((await openai().responses.retrieve(streamed.id)).status).toBe('completed');

    await openai().responses.delete(made.id);
    await expect(openai().responses.retrieve(made.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const unstored = await openai().responses.create({ model: 'm', input: 'x', store: false });
    await expect(openai().responses.retrieve(unstored.id)).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  it('refuses the malformed requests OpenAI refuses with a 400, never a 500', async () => {
    for (const [malformed, message] of [
      [{ input: 'x', instructions: ['x'] }, "Invalid type for 'instructions'"],
      [{ input: [null] }, "Invalid type for 'input[0]'"],
      [{ input: [{ role: 'user', content: [null] }] }, "Invalid type for 'input[0].content[0]'"],
      [
        { input: [{ type: 'function_call_output', call_id: 'c', output: [0] }] },
        "Invalid type for 'input[0].output[0]'",
      ],
      [{ input: 'x', tools: [null] }, "'tools[0].type'"],
    ] as const) {
      const refused = openai().responses.create({
        model: 'gpt-4o-mini',
        ...malformed,
      } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      await expect(refused).rejects.toBeInstanceOf(OpenAI.BadRequestError);
      await expect(refused).rejects.toThrow(message);
    }
  });

  it('counts tokens as Anthropic does, without an output budget', async () => {
    const anthropic = new Anthropic({ apiKey: 'sk-a', baseURL, maxRetries: 0 });
    const counted = await anthropic.messages.countTokens({
      model: 'claude-sonnet-4-5',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(counted).toEqual({ input_tokens: 3 + 3 });
  });
});
