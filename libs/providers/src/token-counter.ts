import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  CL100K_TOKEN_SPLIT_REGEX,
  O200K_TOKEN_SPLIT_REGEX,
} from 'gpt-tokenizer/encodingParams/constants';

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

interface Encoding {
  encoder: Encoder;
  /** The encoding's own pre-tokenizer: the pieces byte-pair merging runs on one at a time. */
  pieces: RegExp;
}

// Text that contains `<|endoftext|>` and the like is counted as the plain text it is.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

// The bounds of a count (docs/reliability.md, "Counting tokens in bounded time"). Byte-pair
// merging takes time quadratic in a piece's length, and a client chooses its pieces: one
// word of 60 KB held the event loop for seconds. Words, numbers and runs of punctuation in
// ordinary text are far shorter than MAX_PIECE, so those are counted exactly.

/** Longer pieces are counted by chunks of this many UTF-16 units. */
export const MAX_PIECE = 256;
/** Of long pieces, this many units are counted by chunks; the rest at the chunks' ratio. */
export const LONG_PIECE_BUDGET = 32 * 1024;
/** A text is counted up to this many units; the rest is estimated. */
export const EXACT_LIMIT = 1024 * 1024;
/** The pre-tokenizer runs on windows this long, so one match never spans a huge text. */
const WINDOW = 2048;
/** The bytes of an estimated rest are measured in slices this long. */
const BYTES_SLICE = 64 * 1024;
/** The event loop is given a turn once a count has run this long. */
const TURN_MS = 8;

const NON_SPACE = /\S/;
/** How far past a piece's end the pre-tokenizers read to decide where it ends. */
const REACH = 4;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** `end`, or one less where `end` would split a surrogate pair. */
function cutAt(text: string, end: number): number {
  return end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) ? end - 1 : end;
}

/**
 * Counts tokens with gpt-tokenizer: metering's count for requests whose upstream reported
 * no usage, and the edge's answer to a token count for models not served by Anthropic. The
 * encodings (tens of MB in memory) are loaded by `load` or the first count. A count yields
 * to the event loop every few milliseconds and its work is bounded whatever the text.
 */
export class TokenCounter {
  private readonly encodings = new Map<TokenizerEncoding, Promise<Encoding>>();

  /**
   * Loads both encodings, for a service to call before it is ready: evaluating one holds the
   * event loop for a quarter of a second, which the first count must not do while serving.
   */
  async load(): Promise<void> {
    await Promise.all([this.encoding('o200k_base'), this.encoding('cl100k_base')]);
  }

  async count(model: string, text: string | undefined): Promise<number> {
    if (!text) return 0;
    const { encoder, pieces } = await this.encoding(encodingFor(model));
    const exact = (slice: string): number => (slice ? encoder.countTokens(slice, PLAIN_TEXT) : 0);

    let tokens = 0;
    // Units of long pieces counted by chunks, their tokens, and the units left to estimate.
    let longCounted = 0;
    let longTokens = 0;
    let longRest = 0;
    let turnStarted = performance.now();
    const pause = async (): Promise<void> => {
      if (performance.now() - turnStarted < TURN_MS) return;
      await nextTurn();
      turnStarted = performance.now();
    };

    const countLong = async (piece: string): Promise<void> => {
      let at = 0;
      while (at < piece.length && longCounted < LONG_PIECE_BUDGET) {
        const end = cutAt(piece, Math.min(piece.length, at + MAX_PIECE));
        const counted = exact(piece.slice(at, end));
        tokens += counted;
        longTokens += counted;
        longCounted += end - at;
        at = end;
        await pause();
      }
      longRest += piece.length - at;
    };

    let position = 0;
    while (position < text.length && position < EXACT_LIMIT) {
      const windowEnd = cutAt(text, Math.min(text.length, position + WINDOW));
      const window = text.slice(position, windowEnd);
      const final = windowEnd === text.length;
      // Pieces are cut where the whole text's pre-tokenization cuts them: after a piece
      // with a non-space character (whose end no later space can move), never after the
      // window's last piece, which may go on past the window, nor closer to the window's end
      // than a contraction suffix ('ll) reaches, which may extend a word past the window.
      const found: number[] = [];
      let cut = 0;
      for (const match of window.matchAll(pieces)) {
        const start = match.index;
        const end = start + match[0].length;
        if (!final && end === window.length) break;
        found.push(start, end);
        if (final || (end <= window.length - REACH && NON_SPACE.test(match[0]))) cut = end;
      }
      if (cut === 0) {
        // One piece runs past the window: longer than MAX_PIECE, so an estimate anyway.
        const last = found.length > 0 ? found[found.length - 1]! : 0;
        found.push(last, window.length);
        cut = window.length;
      }
      let run = 0;
      for (let i = 0; i < found.length && found[i + 1]! <= cut; i += 2) {
        const start = found[i]!;
        const end = found[i + 1]!;
        if (end - start <= MAX_PIECE) continue;
        tokens += exact(window.slice(run, start));
        await countLong(window.slice(start, end));
        run = end;
      }
      tokens += exact(window.slice(run, cut));
      position += cut;
      await pause();
    }

    if (longRest > 0) tokens += Math.ceil((longRest * longTokens) / longCounted);
    if (position < text.length) {
      // What follows EXACT_LIMIT: at the counted part's ratio, and never fewer than one token
      // per four UTF-8 bytes, so a cheap beginning does not discount the rest. Its bytes are
      // measured a slice at a time: one call on megabytes holds the loop for tens of ms.
      const atRatio = Math.ceil(((text.length - position) * tokens) / position);
      let bytes = 0;
      for (let at = position; at < text.length;) {
        const end = cutAt(text, Math.min(text.length, at + BYTES_SLICE));
        bytes += Buffer.byteLength(text.slice(at, end), 'utf8');
        at = end;
        await pause();
      }
      tokens += Math.max(atRatio, Math.ceil(bytes / 4));
    }
    return tokens;
  }

  private encoding(encoding: TokenizerEncoding): Promise<Encoding> {
    let loading = this.encodings.get(encoding);
    if (!loading) {
      loading = (
        encoding === 'o200k_base'
          ? import('gpt-tokenizer/encoding/o200k_base')
          : import('gpt-tokenizer/encoding/cl100k_base')
      ).then((encoder) => ({
        encoder,
        pieces: encoding === 'o200k_base' ? O200K_TOKEN_SPLIT_REGEX : CL100K_TOKEN_SPLIT_REGEX,
      }));
      loading.catch(() => this.encodings.delete(encoding));
      this.encodings.set(encoding, loading);
    }
    return loading;
  }
}
