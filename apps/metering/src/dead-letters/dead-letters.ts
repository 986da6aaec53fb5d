import { type UsageBatch, type UsageRecord } from '@switchyard/contracts';
import { UsageQueue } from '@switchyard/messaging';
import { type Job } from 'bullmq';

/** A usage job that failed every attempt (or was invalid) and waits for an operator. */
export interface DeadLetter {
  id: string;
  reason: string;
  attempts: number;
  failedAt: string | null;
  /** Usage records the job holds: one, or a batch's (a batch fails whole only when it cannot be read). */
  records: number;
  /** Of the job's only record, or the earliest of a batch. */
  requestedAt: string | null;
  /** Of the job's only record; null for a batch. */
  tokenId: number | null;
  model: string | null;
  /** The job's data exactly as it is stored, for an operator to inspect. */
  data: unknown;
}

export interface DeadLetterPage {
  total: number;
  items: DeadLetter[];
}

const PAGE = 500;

/**
 * The dead-letter list of the usage queue is BullMQ's failed set (USAGE_JOB_OPTIONS keeps
 * failed jobs). Replaying moves a job back to the queue with a full set of attempts; its
 * request id still guards against billing it twice.
 */
export class DeadLetters {
  constructor(private readonly queue: UsageQueue) {}

  async list(offset: number, limit: number): Promise<DeadLetterPage> {
    const [total, jobs] = await Promise.all([
      this.queue.getFailedCount(),
      limit > 0 ? this.queue.getJobs(['failed'], offset, offset + limit - 1) : Promise.resolve([]),
    ]);
    return { total, items: jobs.filter((job) => job !== undefined && job !== null).map(describe) };
  }

  /** False when no failed job has that id. */
  async replay(id: string): Promise<boolean> {
    const job = await this.queue.getJob(id);
    if (!job || !(await job.isFailed())) return false;
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    return true;
  }

  /** Replays every job failed at the time of the call; returns how many. */
  async replayAll(): Promise<number> {
    const ids: string[] = [];
    for (let start = 0; ; start += PAGE) {
      const page = await this.queue.getRanges(['failed'], start, start + PAGE - 1);
      ids.push(...page);
      if (page.length < PAGE) break;
    }
    let replayed = 0;
    for (const id of new Set(ids)) {
      if (await this.replay(id)) replayed += 1;
    }
    return replayed;
  }
}

type UsageJob = Job<UsageRecord> | Job<UsageBatch>;

function describe(job: UsageJob): DeadLetter {
  const records = UsageQueue.recordsOf(job);
  const only = (records.length === 1 ? (records[0] ?? {}) : {}) as Partial<
    Record<keyof UsageRecord, unknown>
  >;
  return {
    id: job.id ?? '',
    reason: job.failedReason ?? '',
    attempts: job.attemptsMade,
    failedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
    records: records.length,
    requestedAt: isoTime(UsageQueue.requestedAtOf(job.id ?? '') ?? only.requestedAt),
    tokenId: typeof only.tokenId === 'number' ? only.tokenId : null,
    model: typeof only.model === 'string' ? only.model : null,
    data: job.data,
  };
}

const LAST_DATE_MS = 8.64e15;

function isoTime(value: unknown): string | null {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= LAST_DATE_MS
    ? new Date(value).toISOString()
    : null;
}
