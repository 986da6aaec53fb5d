import { GatewayError, type RoutedChannel } from '@switchyard/contracts';
import { type ChannelCall } from '../front-api.js';
import { DEFAULT_OUTPUT_TOKENS } from '../request-body.js';
import { completions } from './completions.api.js';

function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

const raw = (value: unknown) => Buffer.from(JSON.stringify(value));
const target = (provider: RoutedChannel['provider'], upstreamModel = 'm') => ({
  channel: { provider } as RoutedChannel,
  upstreamModel,
  secret: 'sk-upstream',
  settings: { apiVersion: '2024-10-21' },
  clientHeaders: {},
});

describe('legacy completions', () => {
  it.each([
    ['a string', 'hi', 1],
    ['strings', ['a', 'b', 'c'], 3],
    ['token ids', [1, 2, 3], 1],
    ['lists of token ids', [[1], [2]], 2],
  ])('holds an output budget per choice for %s', (_name, prompt, prompts) => {
    const parsed = completions.parse(raw({ model: 'm', prompt, max_tokens: 10, n: 2 }));
    expect(parsed.worstCaseOutputTokens).toBe(10 * 2 * prompts);
  });

  it('holds the default budget without max_tokens, the larger of n and best_of', () => {
    const parsed = completions.parse(raw({ model: 'm', prompt: 'x', n: 1, best_of: 3 }));
    expect(parsed.worstCaseOutputTokens).toBe(DEFAULT_OUTPUT_TOKENS * 3);
  });

  it.each([[{ not: 'a prompt' }], [[]], [[1, 'a']], [null]])('refuses the prompt %j', (prompt) => {
    expect(refusal(() => completions.parse(raw({ model: 'm', prompt }))).param).toBe('prompt');
  });

  it('asks a stream for its usage, sends azure to the deployment, passes others over', () => {
    const parsed = completions.parse(raw({ model: 'm', prompt: 'x', stream: true }));
    const openai = completions.call(parsed, target('openai')) as ChannelCall;
    expect(openai.request.path).toBe('/completions');
    expect(JSON.parse(openai.request.body.toString())).toEqual({
      model: 'm',
      prompt: 'x',
      stream: true,
      stream_options: { include_usage: true },
    });
    const whole = completions.parse(raw({ model: 'm', prompt: 'x' }));
    expect((completions.call(whole, target('openai')) as ChannelCall).request.body).toBe(whole.raw);
    const azure = completions.call(whole, target('azure', 'davinci')) as ChannelCall;
    expect(azure.request).toMatchObject({
      path: '/openai/deployments/davinci/completions?api-version=2024-10-21',
      providerPath: true,
      headers: { 'api-key': 'sk-upstream' },
    });
    const oldAzure = { ...target('azure'), settings: { apiVersion: '2024-06-01' } };
    // An API version that refuses `stream_options` gets the client's body.
    expect((completions.call(parsed, oldAzure) as ChannelCall).request.body).toBe(parsed.raw);
    expect(refusal(() => completions.call(whole, target('bedrock'))).message).toMatch(
      /bedrock channel, which does not offer the legacy completions API/,
    );
  });
});
