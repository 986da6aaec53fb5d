export type TokenizerEncoding = 'o200k_base' | 'cl100k_base';

/** Model families tokenized with o200k_base; every other model counts with cl100k_base. */
const O200K_FAMILIES = /^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-image|gpt-oss|o\d)/;

/** The encoding of a model family, by the model's name (provider prefixes such as `openai/` ignored). */
export function encodingFor(model: string): TokenizerEncoding {
  const name = model.toLowerCase().replace(/^.*\//, '');
  return O200K_FAMILIES.test(name) ? 'o200k_base' : 'cl100k_base';
}

interface Encoder {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
}

// Text that contains `<|endoftext|>` and the like is counted as the plain text it is.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Counts tokens with gpt-tokenizer: metering's count for requests whose upstream reported
 * no usage, and the edge's answer to a token count for models not served by Anthropic. The
 * encodings (several MB each) are loaded on first use.
 */
export class TokenCounter {
  private readonly encoders = new Map<TokenizerEncoding, Promise<Encoder>>();

  async count(model: string, text: string | undefined): Promise<number> {
    if (!text) return 0;
    const encoder = await this.encoder(encodingFor(model));
    return encoder.countTokens(text, PLAIN_TEXT);
  }

  private encoder(encoding: TokenizerEncoding): Promise<Encoder> {
    let loading = this.encoders.get(encoding);
    if (!loading) {
      loading =
        encoding === 'o200k_base'
          ? import('gpt-tokenizer/encoding/o200k_base')
          : import('gpt-tokenizer/encoding/cl100k_base');
      loading.catch(() => this.encoders.delete(encoding));
      this.encoders.set(encoding, loading);
    }
    return loading;
  }
}
