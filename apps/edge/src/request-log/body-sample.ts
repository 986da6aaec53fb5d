import { storablePrefix } from '@switchyard/contracts';
import { REDACTED, redactSecrets } from '@switchyard/observability';

// What the request log keeps of one body: a bounded copy of its first bytes, redacted of
// secrets, then cut to the cap (docs/operations.md, "Request log"). Only requests of tokens
// with the log on ever make one, and only after their answer is out: the hot path of every
// other token does not reach this file.

/**
 * Bytes kept past the cap, so that redaction sees a secret whole even where the cap cuts
 * it: a cut first would leave a prefix the patterns no longer recognise.
 */
const REDACTION_MARGIN_BYTES = 1_024;

/** A body as the request log stores it. */
export interface LoggedBody {
  text: string;
  /** The body was longer than the cap (or its redaction grew it past it) and was cut. */
  truncated: boolean;
}

/** The redaction of logged bodies: the suite's own, then the operator's patterns. */
export class BodyRedactor {
  private readonly patterns: RegExp[];

  constructor(patterns: readonly string[]) {
    this.patterns = patterns.map((source) => new RegExp(source, 'g'));
  }

  redact(text: string): string {
    // Known secrets (the upstream keys this edge opened) and credential shapes: sk-…,
    // Bearer …, "api_key": …, AWS and Google keys, long random runs.
    let out = redactSecrets(text);
    for (const pattern of this.patterns) out = out.replace(pattern, REDACTED);
    return out;
  }
}

/**
 * The first bytes of a body that arrives in chunks (a stream), copied as they pass: never
 * more than the cap and its margin in memory, whatever the body's length.
 */
export class ByteSample {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private seen = 0;

  constructor(private readonly maxBytes: number) {}

  add(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.seen += bytes.length;
    const room = this.maxBytes + REDACTION_MARGIN_BYTES - this.kept;
    if (room <= 0) return;
    // A copy, so the sample does not hold on to the whole of a large chunk.
    const part = Buffer.from(bytes.subarray(0, room));
    this.chunks.push(part);
    this.kept += part.length;
  }

  /** The body as stored: redacted, then cut to the cap. */
  logged(redactor: BodyRedactor): LoggedBody {
    return loggedBody(Buffer.concat(this.chunks), this.seen, this.maxBytes, redactor);
  }
}

/** A body the edge holds whole (a request, an answer read at once), as stored. */
export function logBody(
  body: Buffer | string | null | undefined,
  maxBytes: number,
  redactor: BodyRedactor,
): LoggedBody {
  if (body === null || body === undefined) return { text: '', truncated: false };
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return loggedBody(
    bytes.subarray(0, maxBytes + REDACTION_MARGIN_BYTES),
    bytes.length,
    maxBytes,
    redactor,
  );
}

function loggedBody(
  kept: Buffer,
  total: number,
  maxBytes: number,
  redactor: BodyRedactor,
): LoggedBody {
  // A cut inside a UTF-8 sequence decodes to U+FFFD; storablePrefix takes out NUL and
  // lone surrogates, which Postgres cannot store, and never halves a surrogate pair.
  const redacted = redactor.redact(kept.toString('utf8'));
  const text = storablePrefix(redacted, maxBytes);
  return { text, truncated: total > maxBytes || text.length < redacted.length };
}
