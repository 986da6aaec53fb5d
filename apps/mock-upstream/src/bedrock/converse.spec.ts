import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  ThrottlingException,
  type ConverseStreamOutput,
} from '@aws-sdk/client-bedrock-runtime';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { loadEnvironment, MockUpstreamEnv } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { createService } from '@switchyard/service';
import request from 'supertest';
import { MockUpstreamModule } from '../app.module.js';

// The mock's Bedrock dialect as AWS's own SDK sees it: the SDK signs with Signature V4 (which
// the mock recomputes), decodes the binary event stream and raises AWS's error classes.

const ACCESS_KEY_ID = 'AKIAMOCKBEDROCK00001';
const SECRET = 'mockSecretAccessKey/0123456789abcdefghij';
const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';

describe('mock-upstream: Bedrock Converse', () => {
  let app: NestFastifyApplication;
  let baseUrl: string;
  const client = (secretAccessKey = SECRET, accessKeyId = ACCESS_KEY_ID) =>
    new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: baseUrl,
      credentials: { accessKeyId, secretAccessKey },
      maxAttempts: 1,
      // The runtime client speaks HTTP/2 by default; the mock, like the gateway, HTTP/1.1.
      requestHandler: new NodeHttpHandler(),
    });

  beforeAll(async () => {
    const env = loadEnvironment(MockUpstreamEnv, { MOCK_ACCOUNTS: 'sk-unused' });
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
    baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app.close();
  });

  beforeEach(async () => {
    await request(app.getHttpServer()).post('/_mock/reset').expect(204);
    await request(app.getHttpServer())
      .put(`/_mock/accounts/${encodeURIComponent(`${ACCESS_KEY_ID}:${SECRET}`)}`)
      .send({})
      .expect(200);
  });

  it('answers Converse with the echo, usage and cache reads from the system prompt', async () => {
    const answer = await client().send(
      new ConverseCommand({
        modelId: MODEL,
        system: [{ text: 'Be brief and kind.' }],
        messages: [{ role: 'user', content: [{ text: 'Hello there' }] }],
        inferenceConfig: { maxTokens: 50 },
      }),
    );
    expect(answer.output?.message?.content).toEqual([{ text: 'Echo: Hello there' }]);
    expect(answer.stopReason).toBe('end_turn');
    expect(answer.usage).toMatchObject({ inputTokens: 3, cacheReadInputTokens: 5 });
  });

  it('streams ConverseStream frames, a tool call with its input deltas, and the usage metadata', async () => {
    const answer = await client().send(
      new ConverseStreamCommand({
        modelId: MODEL,
        messages: [{ role: 'user', content: [{ text: 'Weather in Paris?' }] }],
        toolConfig: {
          tools: [
            {
              toolSpec: {
                name: 'get_weather',
                inputSchema: {
                  json: { type: 'object', properties: { city: { type: 'string' } } },
                },
              },
            },
          ],
        },
      }),
    );
    const events: ConverseStreamOutput[] = [];
    for await (const event of answer.stream!) events.push(event);
    const kinds = events.map((event) => Object.keys(event)[0]);
    expect(kinds).toEqual([
      'messageStart',
      'contentBlockStart',
      'contentBlockDelta',
      'contentBlockDelta',
      'contentBlockStop',
      'messageStop',
      'metadata',
    ]);
    expect(events[1]!.contentBlockStart?.start?.toolUse?.name).toBe('get_weather');
    const input = events
      .map((event) => event.contentBlockDelta?.delta?.toolUse?.input ?? '')
      .join('');
    expect(JSON.parse(input)).toEqual({ city: 'example city' });
    expect(events[5]!.messageStop?.stopReason).toBe('tool_use');
    expect(events[6]!.metadata?.usage?.outputTokens).toBeGreaterThan(0);
  });

  it('refuses a wrong secret with InvalidSignatureException and an unknown key id with UnrecognizedClientException', async () => {
    const ask = (c: BedrockRuntimeClient) =>
      c.send(
        new ConverseCommand({
          modelId: MODEL,
          messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
        }),
      );
    await expect(ask(client('wrongSecretAccessKey/0123456789abcdefgh'))).rejects.toMatchObject({
      name: 'InvalidSignatureException',
      $metadata: { httpStatusCode: 403 },
    });
    await expect(ask(client(SECRET, 'AKIAUNKNOWNKEY000000'))).rejects.toMatchObject({
      name: 'UnrecognizedClientException',
      $metadata: { httpStatusCode: 403 },
    });
  });

  it('answers faults and bad requests with AWS error classes', async () => {
    await request(app.getHttpServer())
      .post('/_mock/faults')
      .send({ key: `${ACCESS_KEY_ID}:${SECRET}`, status: 429, times: 1 })
      .expect(204);
    const ask = (messages: unknown) =>
      client().send(new ConverseCommand({ modelId: MODEL, messages: messages as never }));
    await expect(ask([{ role: 'user', content: [{ text: 'Hi' }] }])).rejects.toBeInstanceOf(
      ThrottlingException,
    );
    await expect(
      ask([{ role: 'assistant', content: [{ text: 'I start' }] }]),
    ).rejects.toMatchObject({ name: 'ValidationException', $metadata: { httpStatusCode: 400 } });
  });
});
