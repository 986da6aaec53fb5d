import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import {
  Queues,
  REQUEST_LOG_BATCH_MAX_ENTRIES,
  RequestLogJobs,
  storablePrefix,
  storableText,
  type RequestLogBatch,
  type RequestLogEntry,
} from '@switchyard/contracts';
import { MAX_MODEL_LENGTH } from '@switchyard/domain';
import {
  openTypedQueue,
  type AnyRedis,
  type QueueConnection,
  type TypedQueue,
} from '@switchyard/messaging';
import { Counter, Registry, TRACE_ID_HEADER } from '@switchyard/observability';
import { type Delivery, type Exchange } from '../proxy/exchange.js';
import { BodyRedactor, ByteSample, logBody } from './body-sample.js';

// The request log of tokens (or teams) that have it on (docs/operations.md, "Request
// log"): their requests' bodies, redacted and capped, go to metering on a queue of their
// own, apart from usage, so that a log entry never delays or risks a bill. Best effort:
// entries Redis does not take are dropped and counted, never spooled; the usage row of the
// request is written whatever happens here.

const FLUSH_AFTER_MS = 50;

/** Retried briefly by metering, then dropped: a log entry is no bill. */
const ENTRY_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: true,
  removeOnFail: 100,
} as const;

export interface RequestLogOptions {
  queues: Pick<QueueConnection, 'createClient' | 'prefix'>;
  /** REQUEST_LOG_MAX_BYTES: most bytes kept of each body. */
  maxBytes: number;
  /** REQUEST_LOG_REDACT_PATTERNS. */
  redactPatterns: readonly string[];
}

@Injectable()
export class RequestLog implements OnApplicationShutdown {
  private readonly logger = new Logger('RequestLog');
  readonly maxBytes: number;
  private readonly redactor: BodyRedactor;
  private readonly connection: AnyRedis;
  private readonly queue: TypedQueue<typeof Queues.RequestLog>;
  private pending: RequestLogEntry[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly entries: Counter<'outcome'>;

  constructor(options: RequestLogOptions, registry: Registry) {
    this.maxBytes = options.maxBytes;
    this.redactor = new BodyRedactor(options.redactPatterns);
    // Its own connection, that fails fast: a log entry never waits for Redis to come back.
    this.connection = options.queues.createClient({
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    });
    this.connection.on('error', () => undefined);
    this.queue = openTypedQueue(Queues.RequestLog, {
      connection: this.connection,
      prefix: options.queues.prefix,
    });
    this.queue.on('error', () => undefined);
    this.entries = new Counter({
      name: 'edge_request_log_entries_total',
      help: 'Request log entries of tokens with the log on: queued for metering, or dropped while Redis refused them.',
      labelNames: ['outcome'],
      registers: [registry],
    });
  }

  /** A bounded copy of a stream's bytes as they pass (only for tokens with the log on). */
  sample(): ByteSample {
    return new ByteSample(this.maxBytes);
  }

  /** One finished request of a token with the log on; called after its answer is out. */
  record(exchange: Exchange, delivery: Delivery): void {
    const { request, response } = exchange;
    const requestBody = logBody(request.body, this.maxBytes, this.redactor);
    const answer = delivery.responseSample;
    const responseBody =
      answer instanceof ByteSample
        ? answer.logged(this.redactor)
        : logBody(answer, this.maxBytes, this.redactor);
    const traceId = response.getHeader(TRACE_ID_HEADER);
    const entry: RequestLogEntry = {
      requestId: storableText(request.id),
      tokenId: exchange.token.id,
      endpoint: exchange.api.endpoint,
      model: storablePrefix(exchange.body?.model ?? '', MAX_MODEL_LENGTH),
      status: delivery.status,
      ...(typeof traceId === 'string' ? { traceId } : {}),
      requestBody: requestBody.text,
      responseBody: responseBody.text,
      requestTruncated: requestBody.truncated,
      responseTruncated: responseBody.truncated,
      requestedAt: exchange.requestedAt,
    };
    this.pending.push(entry);
    if (this.pending.length >= REQUEST_LOG_BATCH_MAX_ENTRIES) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
  }

  async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const entries = this.pending;
    if (entries.length === 0) return;
    this.pending = [];
    try {
      const data: RequestLogBatch = { entries };
      await this.queue.add(RequestLogJobs.Entries, data, ENTRY_JOB_OPTIONS);
      this.entries.inc({ outcome: 'queued' }, entries.length);
    } catch (error) {
      this.entries.inc({ outcome: 'dropped' }, entries.length);
      this.logger.warn(
        `Redis refused ${entries.length} request log entries (${(error as Error).message}); dropped`,
      );
    }
  }

  /** After the proxy has drained: what was recorded goes out before the edge stops. */
  async onApplicationShutdown(): Promise<void> {
    await this.flush();
    await this.queue.close().catch(() => undefined);
    this.connection.disconnect();
  }
}
