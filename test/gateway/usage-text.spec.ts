import { query, waitFor } from '@switchyard/testing';
import { freshAccount, Stack, STACK_START_TIMEOUT_MS, uniqueName } from '../support/stack.js';

// Texts Postgres cannot store (NUL, and lone surrogates, which have no UTF-8 form) in what
// a client or an upstream sends: every request still gets its usage row, with the
// offending characters replaced by U+FFFD (docs/reliability.md, "Defects of the edges of
// the services").

interface Row {
  model: string;
  upstreamModel: string | null;
  status: number;
  tokensCounted: boolean;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('gateway + metering: usage of requests carrying unstorable text', () => {
  const stack = new Stack({ metering: true });
  let token: { id: number; key: string };
  let prefix: string;
  let account: string;

  beforeAll(async () => {
    await stack.start();
    token = await stack.createToken();
    prefix = uniqueName('odd');
    account = await freshAccount(stack);
    // One pattern serves every model name the tests send (createChannel waits for routing).
    await stack.createChannel({ models: [`${prefix}*`], keys: [account] });
  }, STACK_START_TIMEOUT_MS);

  afterAll(() => stack.stop());

  /** Sends raw JSON text, so it can carry the escapes `\u0000` and `\ud800` as they are. */
  async function send(json: string): Promise<{ status: number; requestId: string }> {
    const response = await fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.key}`, 'content-type': 'application/json' },
      body: json,
    });
    await response.arrayBuffer();
    return { status: response.status, requestId: response.headers.get('x-request-id')! };
  }

  function row(requestId: string): Promise<Row> {
    return waitFor(
      async () =>
        (
          await query<Row>(
            stack.databaseUrl,
            `SELECT model, "upstreamModel", status, "tokensCounted" FROM "UsageLog" WHERE "requestId" = $1`,
            [requestId],
          )
        )[0],
      { what: `usage row ${requestId}` },
    );
  }

  const chat = (model: string) =>
    `{"model":${model},"messages":[{"role":"user","content":"hello"}]}`;

  it.each([
    ['a NUL', '\\u0000', '\uFFFD'],
    ['a lone high surrogate', '\\ud800', '\uFFFD'],
    ['a lone low surrogate', '\\udc00', '\uFFFD'],
  ])('bills a request whose model name has %s', async (_what, escape, stored) => {
    const sent = await send(chat(`"${prefix}-x${escape}y"`));
    const billed = await row(sent.requestId);
    expect(billed.status).toBe(sent.status);
    expect(billed.model).toBe(`${prefix}-x${stored}y`);
  });

  it('bills a request whose model name is cut at its limit inside a surrogate pair', async () => {
    const head = `${prefix}-`.padEnd(127, 'a');
    const sent = await send(chat(JSON.stringify(`${head}\u{1F600}tail`)));
    const billed = await row(sent.requestId);
    // The pair that straddled unit 128 is left out whole, never halved.
    expect(billed.model).toBe(head);
    expect(billed.model).not.toMatch(LONE_SURROGATE);
    expect(billed.model).not.toContain('\u0000');
  });

  it('bills an answer whose model name and text (counted, without usage) have NUL and lone surrogates', async () => {
    const answer =
      '{"id":"chatcmpl-1","object":"chat.completion","created":1,' +
      `"model":"up\\u0000\\udfffmodel","choices":[{"index":0,"finish_reason":"stop",` +
      '"message":{"role":"assistant","content":"hi\\u0000 there \\ud83d"}}]}';
    await stack.mockFault({ key: account, body: answer, times: 1 });
    const sent = await send(chat(`"${prefix}-plain"`));
    expect(sent.status).toBe(200);
    const billed = await row(sent.requestId);
    expect(billed).toMatchObject({ status: 200, tokensCounted: true });
    expect(billed.upstreamModel).toBe('up\uFFFD\uFFFDmodel');
  });
});
