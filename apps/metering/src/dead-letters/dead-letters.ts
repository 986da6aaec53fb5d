import { type UsageRecord } from '@switchyard/contracts';
import { type Job, type Queue } from 'bullmq';

/** A usage job that failed every attempt (or was invalid) and waits for an operator. */
export interface DeadLetter {
  id: string;
  reason: string;
  attempts: number;
  failedAt: string | null;
  requestedAt: string | null;
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
  constructor(private readonly queue: Queue) {}

  async list(offset: number, limit: number): Promise<DeadLetterPage> {
    const [total, jobs] = await Promise.all([
      this.queue.getFailedCount(),
      limit > 0 ? this.queue.getJobs(['failed'], offset, offset + limit - 1) : Promise.resolve([]),
    ]);
    return { total, items: jobs.filter((job): job is Job => Boolean(job)).map(describe) };
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

function describe(job: Job): DeadLetter {
  const data = (job.data ?? {}) as Partial<Record<keyof UsageRecord, unknown>>;
  return {
    id: job.id ?? '',
    reason: job.failedReason ?? '',
    attempts: job.attemptsMade,
    failedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
    requestedAt: isoTime(data.requestedAt),
    tokenId: typeof data.tokenId === 'number' ? data.tokenId : null,
    model: typeof data.model === 'string' ? data.model : null,
    data: job.data,
  };
}

const LAST_DATE_MS = 8.64e15;

function isoTime(value: unknown): string | null {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= LAST_DATE_MS
    ? new Date(value).toISOString()
    : null;
}
