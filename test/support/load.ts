import { waitFor, query } from '@switchyard/testing';

// Load for the fault tests, and the books it must balance: every request answered, every
// answer billed exactly once.

export interface Answered {
  /** The request id the answer carries (`x-request-id`): an edge's keys its usage row. */
  id: string;
  /**
   * 0 when the answer broke off after its headers (a stream cut when the process sending it
   * died), as fetch gives a network error.
   */
  status: number;
  contentType: string;
  body: string;
  ms: number;
  /** `performance.now()` when the answer was in: when it was sent is `endedAt - ms`. */
  endedAt: number;
}

export interface Load<T extends Answered> {
  /** Steps sent at least (each of one request or a few). */
  requests: number;
  /** Steps in flight at once, each from a worker of its own. */
  concurrency: number;
  /** Sends step `index` from `worker` (0 to `concurrency` - 1); resolves with its answers. */
  send: (index: number, worker: number) => Promise<T[]>;
  /**
   * Called once this many answers are in; the load goes on meanwhile, past `requests` if
   * need be, until it has finished, so whatever it does meets a running load however fast
   * the answers came (a fault's quick 503s can use up a fixed count). `answered` tells how
   * many are in at any moment (to count those served during a fault).
   */
  midway?: { after: number; run: (answered: () => number) => Promise<void> };
}

export interface LoadOptions extends Omit<Load<Answered>, 'send'> {
  /** Where `/v1/chat/completions` is: an edge, or the proxy in front of the edges. */
  baseUrl: string;
  token: string;
  model: string;
  /** Every other request streams (the relay's path) when set. */
  mixStreams?: boolean;
}

/**
 * One request, timed. `onHeaders` sees the response when its headers are in, before the
 * body is read.
 */
export async function request(
  url: string,
  init: RequestInit,
  { timeoutMs = 30_000, onHeaders }: { timeoutMs?: number; onHeaders?: (r: Response) => void } = {},
): Promise<Answered> {
  const started = performance.now();
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  onHeaders?.(response);
  let status = response.status;
  let text = '';
  try {
    text = await response.text();
  } catch (error) {
    // fetch breaks off with a TypeError (by name: it comes from outside the test's realm);
    // a timeout is not one, and stays a failure.
    if ((error as Error).name !== 'TypeError') throw error;
    status = 0;
  }
  const endedAt = performance.now();
  return {
    id: response.headers.get('x-request-id') ?? '',
    status,
    contentType: response.headers.get('content-type') ?? '',
    body: text,
    ms: Math.round(endedAt - started),
    endedAt,
  };
}

export function chat(
  baseUrl: string,
  token: string,
  body: Record<string, unknown>,
  timeoutMs = 30_000,
): Promise<Answered> {
  return request(
    `${baseUrl}/v1/chat/completions`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    },
    { timeoutMs },
  );
}

/** Runs the load; resolves with every answer once the last is in (and `midway` has run). */
export async function runLoad<T extends Answered>(options: Load<T>): Promise<T[]> {
  const answers: T[] = [];
  let next = 0;
  let midway: Promise<void> | undefined;
  let midwayRunning = false;
  const worker = async (worker: number) => {
    while (next < options.requests || midwayRunning) {
      const index = next;
      next += 1;
      answers.push(...(await options.send(index, worker)));
      if (options.midway && midway === undefined && answers.length >= options.midway.after) {
        midwayRunning = true;
        midway = options.midway
          .run(() => answers.length)
          .finally(() => {
            midwayRunning = false;
          });
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, i) => worker(i)));
  await midway;
  return answers;
}

/** Chat completions through `baseUrl`, each step one request. */
export function sendLoad({ baseUrl, token, model, mixStreams, ...load }: LoadOptions) {
  return runLoad({
    ...load,
    send: async (index) => {
      const stream = mixStreams === true && index % 2 === 1;
      return [
        await chat(baseUrl, token, {
          model,
          stream,
          ...(stream ? { stream_options: { include_usage: true } } : {}),
          messages: [{ role: 'user', content: `request ${index}` }],
        }),
      ];
    },
  });
}

export interface UsageRow {
  requestId: string;
  status: number;
  errorCode: string | null;
  cost: string;
  attempts: number;
}

export interface Books {
  rows: UsageRow[];
  /** Milliseconds until the last row arrived, from the call. */
  settledMs: number;
}

/**
 * Waits until the token has exactly `expected` usage rows, then reads them. The caller
 * checks them against what was sent with `balance`.
 */
export async function usageRows(
  databaseUrl: string,
  tokenId: number,
  expected: number,
  timeoutMs = 45_000,
): Promise<Books> {
  const started = performance.now();
  let seen = 0;
  await waitFor(
    async () => {
      const [row] = await query<{ n: string }>(
        databaseUrl,
        'SELECT count(*) AS n FROM "UsageLog" WHERE "tokenId" = $1',
        [tokenId],
      );
      seen = Number(row!.n);
      return seen >= expected ? true : undefined;
    },
    { timeoutMs, what: () => `${expected} usage rows for token ${tokenId} (${seen} seen)` },
  );
  const settledMs = Math.round(performance.now() - started);
  return { rows: await readUsageRows(databaseUrl, tokenId), settledMs };
}

/**
 * Waits until each of `answers` has its usage row (others may be there too: the caller
 * knows which may), then reads the token's rows.
 */
export async function usageRowsOf(
  databaseUrl: string,
  tokenId: number,
  answers: Answered[],
  timeoutMs = 45_000,
): Promise<Books> {
  const started = performance.now();
  let missing = answers.length;
  const rows = await waitFor(
    async () => {
      const rows = await readUsageRows(databaseUrl, tokenId);
      const ids = new Set(rows.map((row) => row.requestId));
      missing = answers.filter((a) => !ids.has(a.id)).length;
      return missing === 0 ? rows : undefined;
    },
    {
      timeoutMs,
      intervalMs: 200,
      what: () => `the usage rows of ${answers.length} answers (${missing} missing)`,
    },
  );
  return { rows, settledMs: Math.round(performance.now() - started) };
}

function readUsageRows(databaseUrl: string, tokenId: number): Promise<UsageRow[]> {
  return query<UsageRow>(
    databaseUrl,
    `SELECT "requestId", status, "errorCode", cost::text AS cost, attempts
       FROM "UsageLog" WHERE "tokenId" = $1`,
    [tokenId],
  );
}

/**
 * The books balance: one row per answer and none more, and the token was charged exactly
 * the sum of its rows' costs (a row billed twice would have been charged twice).
 */
export async function expectBalanced(
  databaseUrl: string,
  tokenId: number,
  answers: Answered[],
  books: Books,
): Promise<{ charged: bigint }> {
  const sent = answers.map((a) => a.id);
  expect(sent.every((id) => id.length > 0)).toBe(true);
  expect(new Set(sent).size).toBe(sent.length);
  expect(books.rows.map((r) => r.requestId).sort()).toEqual([...sent].sort());
  const [token] = await query<{ usedQuota: string }>(
    databaseUrl,
    'SELECT "usedQuota"::text AS "usedQuota" FROM "Token" WHERE id = $1',
    [tokenId],
  );
  const charged = books.rows.reduce((sum, row) => sum + BigInt(row.cost), 0n);
  expect(BigInt(token!.usedQuota)).toBe(charged);
  return { charged };
}

/** An error answer in OpenAI's shape, with its code. */
export function openAIError(answer: Answered): { code: string | null; message: string } {
  expect(answer.contentType).toMatch(/^application\/json/);
  const body = JSON.parse(answer.body) as {
    error?: { message?: unknown; type?: unknown; param?: unknown; code?: unknown };
  };
  expect(typeof body.error?.message).toBe('string');
  expect(typeof body.error?.type).toBe('string');
  expect(body.error).toHaveProperty('param');
  expect(body.error).toHaveProperty('code');
  return { code: body.error!.code as string | null, message: body.error!.message as string };
}

/** Counts answers by status, for the report and for failure messages. */
export function byStatus(answers: Answered[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1;
  return counts;
}

/** Whether the request was served: answered 2xx. */
export const served = (answer: Answered) => answer.status >= 200 && answer.status < 300;

/**
 * From a fault at `at`: its failed answers (those sent before it recovered, by status), and
 * how long until the first request sent after it was served (answered 2xx).
 */
export function recovery(answers: Answered[], at: number) {
  const sentAfter = answers.filter((a) => a.endedAt - a.ms >= at);
  const firstServed = sentAfter
    .filter(served)
    .reduce((first, a) => Math.min(first, a.endedAt), Number.POSITIVE_INFINITY);
  const failed = answers.filter((a) => !served(a) && a.endedAt >= at && a.endedAt <= firstServed);
  return { recoveredMs: Math.round(firstServed - at), failed: byStatus(failed) };
}
