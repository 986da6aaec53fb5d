import { type GatewayEndpoint } from '@switchyard/contracts';
import { type ParsedBody } from '../front-apis/front-api.js';
import { frontApiOf } from '../front-apis/registry.js';
import { DEFAULT_OUTPUT_TOKENS } from '../front-apis/request-body.js';
import { worstCaseCost } from './spend-holds.js';

/** A body as the front API of `endpoint` reads it (its worst-case output included). */
const parseRequestBody = (endpoint: GatewayEndpoint, body: unknown): ParsedBody =>
  frontApiOf(endpoint).parse(body);

const raw = (value: unknown) => Buffer.from(JSON.stringify(value));
/** One micro-dollar a token in, two out. */
const price = { inputPrice: 1_000_000, outputPrice: 2_000_000 };

describe('worstCaseCost', () => {
  it('takes every body byte as a prompt token, plus the output limit the request sets', () => {
    for (const field of ['max_tokens', 'max_completion_tokens']) {
      const body = raw({ model: 'm', messages: [{ role: 'user', content: 'hi' }], [field]: 10 });
      const parsed = parseRequestBody('chat.completions', body);
      expect(worstCaseCost(parsed, price)).toBe(body.length + 20);
    }
    const responses = raw({ model: 'm', input: 'hi', max_output_tokens: 7 });
    expect(worstCaseCost(parseRequestBody('responses', responses), price)).toBe(
      responses.length + 14,
    );
  });

  it('assumes the default output limit when the request sets none', () => {
    const body = raw({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(worstCaseCost(parseRequestBody('chat.completions', body), price)).toBe(
      body.length + 2 * DEFAULT_OUTPUT_TOKENS,
    );
  });

  it('prices embeddings by their input, images as metering bills them, and counting at nothing', () => {
    const input = raw({ model: 'm', input: 'hello' });
    expect(worstCaseCost(parseRequestBody('embeddings', input), price)).toBe(input.length);
    const images = raw({ model: 'm', prompt: 'a cat', n: 2 });
    expect(worstCaseCost(parseRequestBody('images.generations', images), price)).toBe(
      images.length + 2 * 2 * 1_000,
    );
    const count = raw({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(worstCaseCost(parseRequestBody('messages.count_tokens', count), price)).toBeNull();
  });

  it('rounds up, so a priced request never holds nothing', () => {
    const body = raw({ model: 'm', input: 'x' });
    const cheap = { inputPrice: 1, outputPrice: 1 };
    expect(worstCaseCost(parseRequestBody('embeddings', body), cheap)).toBe(1);
  });
});
