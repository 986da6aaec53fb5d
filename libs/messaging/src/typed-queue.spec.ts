import {
  MaintenanceJobs,
  Queues,
  USAGE_BATCH_JOB_NAME,
  USAGE_JOB_NAME,
} from '@switchyard/contracts';
import { UnrecoverableError, type Job } from 'bullmq';
import { dispatchJob, type JobHandlers, type QueuedJob, type TypedQueue } from './typed-queue.js';

const job = (name: string, data: unknown = {}) => ({ name, data }) as Job;

describe('dispatchJob', () => {
  const handlers: JobHandlers<typeof Queues.UsageMaintenance, string> = {
    [MaintenanceJobs.RollUp]: (received) => Promise.resolve(`rolled up ${received.name}`),
    [MaintenanceJobs.Retention]: () => Promise.resolve('retained'),
  };

  it('runs the one handler of the job name', async () => {
    await expect(dispatchJob(Queues.UsageMaintenance, handlers, job('roll-up'))).resolves.toBe(
      'rolled up roll-up',
    );
    await expect(dispatchJob(Queues.UsageMaintenance, handlers, job('retention'))).resolves.toBe(
      'retained',
    );
  });

  it('fails a job of a name the queue does not have, without retries', async () => {
    for (const name of ['vacuum', 'toString', USAGE_JOB_NAME]) {
      await expect(dispatchJob(Queues.UsageMaintenance, handlers, job(name))).rejects.toThrow(
        UnrecoverableError,
      );
    }
  });
});

describe('TypedQueue', () => {
  it('takes only the queue’s job names, each with its own data (checked by tsc)', () => {
    // Never called: the compiler checks these lines (`pnpm typecheck`), Jest only loads them.
    const producer = (queue: TypedQueue<typeof Queues.Usage>) => [
      queue.add(USAGE_BATCH_JOB_NAME, { records: [] }),
      // @ts-expect-error a batch job carries a batch, not a record
      queue.add(USAGE_BATCH_JOB_NAME, { requestId: 'r' }),
      // @ts-expect-error the usage queue has no maintenance job
      queue.add(MaintenanceJobs.RollUp, {}),
    ];
    const handlers: JobHandlers<typeof Queues.Usage, void> = {
      [USAGE_JOB_NAME]: () => Promise.resolve(),
      [USAGE_BATCH_JOB_NAME]: () => Promise.resolve(),
    };
    // @ts-expect-error every job name has its handler
    const missing: JobHandlers<typeof Queues.Usage, void> = { [USAGE_JOB_NAME]: handlers.usage };
    const bulk: QueuedJob<typeof Queues.UsageMaintenance>[] = [
      { name: MaintenanceJobs.Retention, data: {} },
    ];
    expect([producer, handlers, missing, bulk]).toHaveLength(4);
  });
});
