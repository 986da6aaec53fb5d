import { type ChannelOutcome, type OutcomeKind } from '@switchyard/contracts';
import { type StreamTranslator } from '@switchyard/providers';
import { redactAndCut } from '@switchyard/observability';
import { type Candidate } from '@switchyard/routing';
import { UpstreamUnreachable, type UpstreamResponse } from '../upstream/upstream-client.js';
import { type JsonSummary } from './json-summary.js';

// Reading what an upstream answered: enough of it to know whether the attempt delivered,
// and the words the router and the client get when it did not.

/**
 * An upstream answer held until its first bytes are in: a JSON answer whole (it is small,
 * and its usage is read from it), a stream up to its first chunk.
 */
export type Answer =
  | {
      kind: 'whole';
      body: Buffer;
      /**
       * A successful answer as read by the failover step (one that is no JSON fails over), or
       * as its conversion read it (/v1/messages: the usage of the answer before conversion).
       */
      summary?: JsonSummary;
      /** The id the upstream keeps this answer under (a stored Response): see `storedId` below. */
      storedId?: string;
    }
  | {
      kind: 'stream';
      first: Buffer | null;
      rest: AsyncIterator<Buffer>;
      /** Set when the stream is converted: its usage, and whether the provider broke it off. */
      translator?: StreamTranslator;
      /** Bytes, not events (audio): relayed as they come, not held to event boundaries. */
      binary?: boolean;
      /**
       * The id the upstream keeps this answer under (a stored Response), once the events
       * relayed so far have said it: its follow-ups must go back to the same channel and key
       * (front-apis/responses/response-owners.ts).
       */
      storedId?: () => string | null;
    };

/** Server-sent events, and AWS's binary event stream (Bedrock's ConverseStream). */
const STREAM_TYPES = /text\/event-stream|application\/vnd\.amazon\.eventstream/;
/** Audio (OpenAI's speech): streamed as it comes, however long, rather than read whole. */
const AUDIO_TYPES = /^\s*audio\//i;

/**
 * Reads an answer up to its first body chunk, which must come within `firstChunkMs` of the
 * headers: an upstream (or relay) that sends its headers and then nothing would otherwise
 * hold the request for the whole idle timeout, past the point where it could fail over.
 * After the first chunk only the idle timeout applies (a relay's keep-alive padding counts
 * as a chunk, so a long generation is never cut).
 */
export async function receive(
  response: UpstreamResponse,
  firstChunkMs: number,
  /** The front API answers audio (speech): an `audio/*` answer is streamed as bytes. */
  audio = false,
): Promise<Answer> {
  const chunks = response.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await firstChunk(response, chunks, firstChunkMs);
  const type = String(response.headers['content-type'] ?? '');
  if (audio && AUDIO_TYPES.test(type))
    return { kind: 'stream', first: first.done ? null : first.value, rest: chunks, binary: true };
  if (!STREAM_TYPES.test(type)) {
    const parts = first.done ? [] : [first.value];
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
      parts.push(next.value);
    }
    return { kind: 'whole', body: Buffer.concat(parts) };
  }
  return { kind: 'stream', first: first.done ? null : first.value, rest: chunks };
}

async function firstChunk(
  response: UpstreamResponse,
  chunks: AsyncIterator<Buffer>,
  waitMs: number,
): Promise<IteratorResult<Buffer>> {
  // Most answers' first bytes come in with their headers and are read already: nothing to
  // wait for, so no timer to set and clear (docs/performance.md, "A token hashed once a
  // connection").
  if (response.body.readableLength > 0) return chunks.next();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      response.body.destroy();
      reject(
        new UpstreamUnreachable(
          'timeout',
          `no answer within ${waitMs} ms after the response headers`,
        ),
      );
    }, waitMs);
  });
  try {
    return await Promise.race([chunks.next(), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The upstream's own words for a refused attempt, for the client, logs and the router
 * (never for billing), with the channel's key and anything credential-shaped removed.
 */
export async function readErrorDetail(response: UpstreamResponse, secret: string): Promise<string> {
  try {
    return errorDetailOf(await response.body.text(), secret);
  } catch {
    return '';
  }
}

const MAX_DETAIL_CHARS = 200;

/**
 * The message of an error body, whatever its provider (they all nest it in `error`),
 * redacted before it is cut: a cut first could leave part of a key the redaction no longer
 * recognises (docs/architecture.md, "Secrets in error text").
 */
export function errorDetailOf(body: string, secret: string): string {
  const text = body.slice(0, 2_000);
  let detail: string;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string; code?: string } };
    detail = parsed.error?.message ?? parsed.error?.code ?? text;
  } catch {
    detail = text;
  }
  return redactAndCut(detail, MAX_DETAIL_CHARS, [secret]);
}

/**
 * A converted provider's error answer, read within the first-chunk wait like any answer;
 * empty when it did not come in time (its status alone then tells).
 */
export async function readErrorBody(
  response: UpstreamResponse,
  firstChunkMs: number,
): Promise<Buffer> {
  try {
    const answer = await receive(response, firstChunkMs);
    if (answer.kind === 'whole') return answer.body;
    await answer.rest.return?.();
    return answer.first ?? Buffer.alloc(0);
  } catch {
    return Buffer.alloc(0);
  }
}

/** The last event of a stream cut mid-way: an error the OpenAI SDKs raise to the caller. */
export function interruptionEvent(reason: string): string {
  const error = {
    error: {
      message: `The upstream stream was interrupted: ${reason}`,
      type: 'upstream_error',
      param: null,
      code: 'stream_interrupted',
    },
  };
  return `data: ${JSON.stringify(error)}\n\n`;
}

/** How one attempt went, for the router (the one authority on channel health). */
export function channelOutcome(
  candidate: Candidate,
  kind: OutcomeKind,
  startedAt: number,
  response?: UpstreamResponse,
  detail?: string,
): ChannelOutcome {
  const retryAfter = response?.headers['retry-after'];
  return {
    channelId: candidate.channel.id,
    keyId: candidate.key.id,
    kind,
    latencyMs: Math.round(performance.now() - startedAt),
    at: Date.now(),
    ...(response ? { httpStatus: response.statusCode } : {}),
    ...(typeof retryAfter === 'string' && /^\d+$/.test(retryAfter)
      ? { retryAfterMs: Number(retryAfter) * 1000 }
      : {}),
    ...(detail ? { detail: redactAndCut(detail, MAX_DETAIL_CHARS) } : {}),
  };
}
