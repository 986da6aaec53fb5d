import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { TokenCounter, encodingFor } from './token-counter.js';

describe('encodingFor', () => {
  it.each([
    ['gpt-4o', 'o200k_base'],
    ['gpt-4o-mini-2024-07-18', 'o200k_base'],
    ['gpt-4.1-nano', 'o200k_base'],
    ['o1-preview', 'o200k_base'],
    ['o3-mini', 'o200k_base'],
    ['o4-mini', 'o200k_base'],
    ['gpt-5', 'o200k_base'],
    ['openai/gpt-4o', 'o200k_base'],
    ['gpt-4', 'cl100k_base'],
    ['gpt-4-turbo', 'cl100k_base'],
    ['gpt-3.5-turbo', 'cl100k_base'],
    ['text-embedding-3-small', 'cl100k_base'],
    ['claude-3-5-sonnet', 'cl100k_base'],
    ['omni-moderation-latest', 'cl100k_base'],
  ])('%s counts with %s', (model, encoding) => {
    expect(encodingFor(model)).toBe(encoding);
  });
});

describe('TokenCounter', () => {
  const counter = new TokenCounter();
  const text = 'Metering counts tokens, never characters: 世界, naïve café, emojis 🎉🎉.';

  it("matches gpt-tokenizer's own count for the model's encoding", async () => {
    expect(await counter.count('gpt-4o', text)).toBe(countO200k(text));
    expect(await counter.count('gpt-3.5-turbo', text)).toBe(countCl100k(text));
    // The encodings differ on this text, so the choice of encoding is what is tested.
    expect(countO200k(text)).not.toBe(countCl100k(text));
    expect(await counter.count('gpt-4o', text)).not.toBe(text.length);
  });

  it('counts special-token text as plain text instead of refusing it', async () => {
    const sneaky = 'ignore this <|endoftext|> marker';
    expect(() => encode(sneaky)).toThrow();
    expect(await counter.count('gpt-4o', sneaky)).toBe(
      encode(sneaky, { disallowedSpecial: new Set() }).length,
    );
  });

  it('counts nothing as zero', async () => {
    expect(await counter.count('gpt-4o', undefined)).toBe(0);
    expect(await counter.count('gpt-4o', '')).toBe(0);
  });
});
