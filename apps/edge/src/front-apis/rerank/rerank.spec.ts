import { GatewayError } from '@switchyard/contracts';
import { rerank, rerankUsage, SEARCH_UNIT_TOKENS } from './rerank.api.js';

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

describe('rerank', () => {
  it('bills search units as 1,000 input tokens each, else the tokens reported', () => {
    expect(
      rerankUsage({ meta: { billed_units: { search_units: 2 } }, usage: { total_tokens: 9 } }),
    ).toEqual({ promptTokens: 2 * SEARCH_UNIT_TOKENS, completionTokens: 0 });
    expect(rerankUsage({ usage: { total_tokens: 9 } })).toEqual({
      promptTokens: 9,
      completionTokens: 0,
    });
    expect(rerankUsage({})).toBeNull();
  });

  it('holds the search units the documents make when they are more than the bytes', () => {
    const parsed = rerank.parse(
      raw({ model: 'r', query: 'q', documents: Array.from({ length: 101 }, () => 'd') }),
    );
    expect(parsed.worstCaseInputTokens).toBe(2 * SEARCH_UNIT_TOKENS);
    expect(parsed.promptText()).toBe(['q', ...Array.from({ length: 101 }, () => 'd')].join('\n'));
  });

  it.each([
    [{ model: 'r', query: 'q', documents: ['a'], return_documents: 'yes' }, 'return_documents'],
    [{ model: 'r', query: 'q', documents: ['a'], top_n: 1.5 }, 'top_n'],
    [{ model: 'r', query: '', documents: ['a'] }, 'query'],
  ])('refuses %j naming %s', (body, param) => {
    expect(refusal(() => rerank.parse(raw(body))).param).toBe(param);
  });
});
