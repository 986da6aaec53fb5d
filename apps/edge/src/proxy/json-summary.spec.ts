import { type JsonSummary, summarizeJson } from './json-summary.js';

const json = (value: unknown, indent?: number) => Buffer.from(JSON.stringify(value, null, indent));

/** What reading the whole answer finds: the summary's meaning, independent of how it is read. */
function readWhole(body: Buffer): JsonSummary {
  const answer = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  const usage = answer.usage as Record<string, unknown> | undefined;
  const prompt = usage?.prompt_tokens ?? usage?.input_tokens;
  const completion = usage?.completion_tokens ?? usage?.output_tokens;
  const cached = (usage?.prompt_tokens_details as { cached_tokens?: unknown } | undefined)
    ?.cached_tokens;
  const choices = Array.isArray(answer.choices)
    ? (answer.choices as { message?: { content?: unknown } }[])
    : [];
  return {
    usage:
      typeof prompt === 'number'
        ? {
            promptTokens: prompt,
            completionTokens: typeof completion === 'number' ? completion : 0,
            ...(typeof cached === 'number' && cached > 0 ? { cachedTokens: cached } : {}),
          }
        : null,
    model: typeof answer.model === 'string' ? answer.model : null,
    completionText:
      typeof prompt === 'number'
        ? ''
        : choices
            .map((c) => (typeof c?.message?.content === 'string' ? c.message.content : ''))
            .join(''),
    items: Array.isArray(answer.data) ? answer.data.length : 0,
  };
}

/** Texts that look like the keys and brackets the ends are read by. */
const TRICKY = [
  'Hello!',
  'say "usage": {"prompt_tokens": 1}',
  '"model": "not-this-one"',
  'a backslash \\ then a quote \\"',
  'ends with a backslash \\',
  '}}]] {{[[',
  ',"usage":{"prompt_tokens":99}}',
  'ünïcödé ✓ 日本語',
];

/** A small deterministic generator, so a failure names its case. */
function* shuffled<T>(items: T[], seed: number): Generator<T[], never> {
  let state = seed;
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31);
  for (;;) {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = next() % (i + 1);
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    yield copy;
  }
}

describe('summarizeJson', () => {
  it('reads chat, embeddings and image usage shapes', () => {
    expect(
      summarizeJson(
        json({
          model: 'm',
          usage: { prompt_tokens: 3, completion_tokens: 4 },
          choices: [{ message: { content: 'hi' } }],
        }),
      ),
    ).toEqual({
      usage: { promptTokens: 3, completionTokens: 4 },
      model: 'm',
      // Read only when no usage came: metering counts it then.
      completionText: '',
      items: 0,
    });
    expect(
      summarizeJson(
        json({
          choices: [{ message: { content: 'hi' } }, null, { message: { content: ' there' } }],
        }),
      )?.completionText,
    ).toBe('hi there');
    expect(summarizeJson(json({ usage: { prompt_tokens: 5, total_tokens: 5 } }))?.usage).toEqual({
      promptTokens: 5,
      completionTokens: 0,
    });
    expect(summarizeJson(json({ usage: { input_tokens: 8, output_tokens: 1 } }))?.usage).toEqual({
      promptTokens: 8,
      completionTokens: 1,
    });
    expect(summarizeJson(json({ data: [{ url: 'a' }, { url: 'b' }] }))?.items).toBe(2);
    // Images that report usage are still counted, when their API asks for it.
    const images = json({
      created: 1,
      data: [{ url: 'a' }, { url: 'b' }],
      usage: { input_tokens: 4 },
    });
    expect(summarizeJson(images)?.items).toBe(0);
    expect(summarizeJson(images, { countItems: true })).toEqual({
      usage: { promptTokens: 4, completionTokens: 0 },
      model: null,
      completionText: '',
      items: 2,
    });
  });

  it('finds no answer in what is not a JSON object', () => {
    for (const body of [
      'not json',
      '',
      '   ',
      '{"id":"chatcmpl-1","choices":[{"ind',
      // Cut just before the last brace: the usage closes, the answer does not.
      '{"model":"m","usage":{"prompt_tokens":1,"completion_tokens":2}',
      '{"model":"m","usage":{"prompt_tokens":1,"completion_tokens":2}}}',
      // The first object closes before the model: it is in none.
      '{"a":1},"model":"x","usage":{"prompt_tokens":1}}',
      '[1]',
      'null',
      '7',
    ])
      expect(summarizeJson(Buffer.from(body))).toBeNull();
    expect(summarizeJson(Buffer.from('{"choices":5,"usage":"x"}'))).toEqual({
      usage: null,
      model: null,
      completionText: '',
      items: 0,
    });
  });

  it('reads an answer that ends with its usage at its ends only', () => {
    // Broken in the middle, whole at both ends: only a reading of the ends takes it. What an
    // upstream cuts short loses its end, where the usage is, and is read whole.
    const body = Buffer.from(
      '{"id":"x","model":"gpt-4o","choices":[{"message": oops}],"usage":{"prompt_tokens":2,"completion_tokens":3}}',
    );
    expect(summarizeJson(body)).toEqual({
      usage: { promptTokens: 2, completionTokens: 3 },
      model: 'gpt-4o',
      completionText: '',
      items: 0,
    });
    // Escaped quotes and brackets in the strings at either end are read as text.
    const escaped = Buffer.from(
      String.raw`{"id":"a \" {[ \\","model":"m\"1","choices":[oops],"usage":{"prompt_tokens":1,"note":"}\""},"fp":"x \" ]} y"}`,
    );
    expect(summarizeJson(escaped)).toEqual({
      usage: { promptTokens: 1, completionTokens: 0 },
      model: 'm"1',
      completionText: '',
      items: 0,
    });
  });

  it('finds what reading the whole answer finds, whatever the order of its members', () => {
    const members = (content: string, i: number): [string, unknown][] => [
      ['id', `chatcmpl-${i}`],
      ['object', 'chat.completion'],
      ['created', 1_764_470_000 + i],
      ['model', i % 5 === 0 ? null : `gpt-4o-${i}`],
      [
        'choices',
        [
          {
            index: 0,
            message: { role: 'assistant', content, model: 'nested' },
            usage: { prompt_tokens: 77 },
          },
        ],
      ],
      [
        'usage',
        i % 7 === 0
          ? { completion_tokens: 3 }
          : {
              prompt_tokens: 10 + i,
              completion_tokens: i,
              total_tokens: 10 + 2 * i,
              prompt_tokens_details: { cached_tokens: i % 3 },
            },
      ],
      ['service_tier', 'default'],
      ['system_fingerprint', `fp_${i}`],
      ['extra', { usage: { prompt_tokens: 55 }, list: [1, [2, { model: 'deep' }]] }],
    ];
    const orders = shuffled([...Array(9).keys()], 7);
    for (let i = 0; i < 400; i++) {
      const all = members(TRICKY[i % TRICKY.length]!, i);
      const order = orders.next().value;
      // Some answers leave out members, the model and the usage among them.
      const kept = order.filter((index) => (i + index) % 4 !== 0);
      const answer = Object.fromEntries(kept.map((index) => all[index]!));
      for (const body of [
        json(answer),
        json(answer, 2),
        Buffer.from(` \n${JSON.stringify(answer)}\r\n`),
      ])
        expect([i, summarizeJson(body)]).toEqual([i, readWhole(body)]);
    }
  });

  it("finds OpenAI's and Anthropic's answers as they are written", () => {
    const openai = json({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-2024-08-06',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: 9,
        completion_tokens: 2,
        total_tokens: 11,
        prompt_tokens_details: { cached_tokens: 4 },
      },
      service_tier: 'default',
      system_fingerprint: 'fp_1',
    });
    expect(summarizeJson(openai)).toEqual({
      usage: { promptTokens: 9, completionTokens: 2, cachedTokens: 4 },
      model: 'gpt-4o-2024-08-06',
      completionText: '',
      items: 0,
    });
    const anthropic = json({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4',
      content: [{ type: 'text', text: 'Hi' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 6 },
    });
    expect(summarizeJson(anthropic)?.usage).toEqual({ promptTokens: 12, completionTokens: 6 });
    expect(summarizeJson(anthropic)?.model).toBe('claude-sonnet-4');
  });
});
