import { readFileSync, readdirSync } from 'node:fs';
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { EXACT_LIMIT, MAX_PIECE, TokenCounter, encodingFor } from './token-counter.js';

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

describe('TokenCounter on ordinary text', () => {
  const counter = new TokenCounter();
  const docs = new URL('../../../docs/', import.meta.url);
  const corpus = [
    ...readdirSync(docs)
      .filter((name) => name.endsWith('.md'))
      .map((name) => readFileSync(new URL(name, docs), 'utf8')),
    readFileSync(new URL('./token-counter.ts', import.meta.url), 'utf8'),
    '计数器按词元计费，而不是按字符。长文本被分成窗口逐段计算，每段之后让出事件循环。',
    'トークンは文字ではなく、エンコーディングの規則で数えられます。東京は晴れです。',
    '토큰은 문자가 아니라 인코딩 규칙으로 셉니다. 서울은 맑습니다.',
    'Emojis 🎉🎉🎉 👍🏽 🇫🇷🇩🇪 👨‍👩‍👧‍👦 and accents: naïve café, Ærøskøbing, Zürich.',
    'Whitespace:\n\n\n   indented\n\t\ttabs  \r\n  trailing   \n\n',
    '{"a": [1, 2, 3], "numbers": 1234567890.123, "neg": -42}\n',
  ];
  // A text cut into many windows: every kind of piece meets a window's edge somewhere.
  const long = corpus.join('\n\n');

  it.each(['gpt-4o', 'gpt-4'])("equals gpt-tokenizer's count for %s", async (model) => {
    const plain = model === 'gpt-4o' ? countO200k : countCl100k;
    const options = { disallowedSpecial: new Set<string>() };
    for (const text of corpus) expect(await counter.count(model, text)).toBe(plain(text, options));
    expect(long.length).toBeLessThan(EXACT_LIMIT);
    expect(await counter.count(model, long)).toBe(plain(long, options));
  });

  it('equals it on every offset of the windows', async () => {
    // Shifting the text moves every window edge through the pieces near it.
    const sample = long.slice(0, 20_000);
    for (let shift = 0; shift < 40; shift += 1) {
      const text = sample.slice(shift);
      expect(await counter.count('gpt-4o', text)).toBe(
        countO200k(text, { disallowedSpecial: new Set() }),
      );
    }
  });

  it('equals it on generated text of ordinary pieces', async () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const atoms = [
      ' ',
      '  ',
      '\n',
      '\n\n',
      '\t',
      'word',
      'Word',
      'WORD',
      "it's",
      '123456',
      '.',
      ',',
      '!?',
      '->',
      '世界',
      'é',
      '🎉',
      '👍🏽',
      '\r\n',
      '   \n',
      '/',
      '"',
      '{',
      '}',
    ];
    for (let round = 0; round < 20; round += 1) {
      const parts: string[] = [];
      for (let i = 0; i < 3_000; i += 1) parts.push(atoms[random(atoms.length)]!);
      const text = parts.join('');
      for (const [model, plain] of [
        ['gpt-4o', countO200k],
        ['gpt-4', countCl100k],
      ] as const)
        expect(await counter.count(model, text)).toBe(
          plain(text, { disallowedSpecial: new Set() }),
        );
    }
  });
});

describe('TokenCounter on adversarial text', () => {
  const counter = new TokenCounter();
  const letters = (n: number): string => {
    let seed = 11;
    let text = '';
    while (text.length < n) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      text += String.fromCharCode(97 + (seed % 26));
    }
    return text;
  };
  // A repeated string is a rope that V8 flattens on its first slice, all at once; a
  // service's texts come flat from JSON.parse, as these do.
  const flat = (text: string): string => JSON.parse(JSON.stringify(text)) as string;
  const cases: [string, string][] = [
    ['one letter, 9 MB', 'a'.repeat(9_000_000)],
    ['random letters, 120 KB', letters(120_000)],
    ['random letters, 2 MB', letters(2_000_000)],
    ['a CJK character, 3 M times', '世'.repeat(3_000_000)],
    ['an emoji, 2 M times', '🎉'.repeat(2_000_000)],
    ['spaces, 1 MB', ' '.repeat(1_000_000)],
    ['distinct short words, 9 MB', letters(9_000_000).replace(/(.{7})/g, '$1 ')],
    ['newlines and spaces, 1 MB', ' \n'.repeat(500_000)],
  ];

  /**
   * Runs `work` and answers the most CPU time the process spent between two turns of the
   * event loop: the time a request would have waited, without the time a machine shared by
   * many runs kept the process off its cores, which wall-clock delay would add.
   */
  async function longestTurn(work: () => Promise<unknown>): Promise<number> {
    let longest = 0;
    let last = process.cpuUsage();
    let probing = true;
    const probe = (): void => {
      const used = process.cpuUsage(last);
      longest = Math.max(longest, (used.user + used.system) / 1_000);
      last = process.cpuUsage();
      if (probing) setImmediate(probe);
    };
    setImmediate(probe);
    await work();
    probing = false;
    probe();
    return longest;
  }

  it.each(cases)(
    '%s: counted in bounded time, the event loop never held long',
    async (_, rope) => {
      const text = flat(rope);
      let tokens = 0;
      const started = performance.now();
      const turn = await longestTurn(async () => {
        tokens = await counter.count('gpt-4o', text);
      });
      const took = performance.now() - started;
      expect(tokens).toBeGreaterThan(0);
      // A turn is bounded to about 8 ms of work and one window; 50 ms leaves room for
      // garbage collection, and the wall time for a machine shared by many runs.
      expect(turn).toBeLessThan(50);
      expect(took).toBeLessThan(30_000);
    },
    60_000,
  );

  it('counts a long piece about as the library would', async () => {
    // Chunks of MAX_PIECE are merged apart, so a long piece is close to, not exactly, its count.
    const text = letters(20 * MAX_PIECE);
    const plain = countO200k(text);
    const counted = await counter.count('gpt-4o', text);
    expect(Math.abs(counted - plain)).toBeLessThan(plain * 0.05);
  });

  it('estimates beyond EXACT_LIMIT at no less than a token per four bytes', async () => {
    const text = 'a'.repeat(EXACT_LIMIT) + '世'.repeat(400_000);
    const counted = await counter.count('gpt-4o', text);
    expect(counted).toBeGreaterThanOrEqual(
      (await counter.count('gpt-4o', 'a'.repeat(EXACT_LIMIT))) + (400_000 * 3) / 4,
    );
  });
});
