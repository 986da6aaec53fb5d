import { InjectQueue } from '@nestjs/bullmq';
import { type JobData, type JobName, type QueueName } from '@switchyard/contracts';
import {
  Queue,
  UnrecoverableError,
  type Job,
  type JobSchedulerTemplateOptions,
  type JobsOptions,
  type QueueOptions,
  type RepeatOptions,
} from 'bullmq';

// BullMQ queues typed by the job map of libs/contracts (`QUEUE_JOBS`), as the event bus is
// by its event map: a producer may add only a job name of the queue, with that name's data;
// a consumer handles each name with one handler of its own.

/** One job of the queue as a producer adds it: a name of the map and that name's data. */
export type QueuedJob<Q extends QueueName> = {
  [N in JobName<Q>]: { name: N; data: JobData<Q, N>; opts?: JobsOptions };
}[JobName<Q>];

/**
 * A BullMQ queue whose `add`, `addBulk` and `upsertJobScheduler` take only the queue's job
 * names, each with its own data: `@InjectTypedQueue(Queues.Usage) queue: TypedQueue<'usage'>`.
 */
export type TypedQueue<Q extends QueueName> = Omit<
  Queue<unknown, unknown, JobName<Q>>,
  'add' | 'addBulk' | 'upsertJobScheduler'
> & {
  add<N extends JobName<Q>>(
    name: N,
    data: JobData<Q, N>,
    opts?: JobsOptions,
  ): Promise<Job<JobData<Q, N>, unknown, N>>;
  addBulk(jobs: QueuedJob<Q>[]): Promise<Job<unknown, unknown, JobName<Q>>[]>;
  upsertJobScheduler<N extends JobName<Q>>(
    schedulerId: string,
    repeat: Omit<RepeatOptions, 'key'>,
    template: { name: N; data?: JobData<Q, N>; opts?: JobSchedulerTemplateOptions },
  ): Promise<Job<JobData<Q, N>, unknown, N>>;
};

/**
 * A queue of the contracts opened outside Nest's BullModule: a producer that wants a
 * connection of its own (one that fails fast, say) or a test adding a job by hand. The
 * name and its job map stay the contracts' (`prefix`: the installation's, `queuePrefixFor`).
 */
export function openTypedQueue<Q extends QueueName>(
  name: Q,
  options: QueueOptions & { prefix: string },
): TypedQueue<Q> {
  return new Queue(name, options) as unknown as TypedQueue<Q>;
}

/** `@InjectQueue` for a queue of the contracts, to be typed `TypedQueue<Q>`. */
export function InjectTypedQueue<Q extends QueueName>(name: Q): ParameterDecorator {
  return InjectQueue(name);
}

/**
 * One handler per job name of the queue. A job's data is as stored, not validated: a
 * handler validates it (`payloadValidator`), since what it does with an invalid job (fail
 * it, set a record aside) is its own.
 */
export type JobHandlers<Q extends QueueName, R> = {
  readonly [N in JobName<Q>]: (job: Job<unknown, R, N>) => Promise<R>;
};

/** Runs the job's handler; a job of a name the queue does not have fails without retries. */
export async function dispatchJob<Q extends QueueName, R>(
  queue: Q,
  handlers: JobHandlers<Q, R>,
  job: Job,
): Promise<R> {
  if (!Object.hasOwn(handlers, job.name)) {
    throw new UnrecoverableError(`the ${queue} queue has no job named ${job.name}`);
  }
  const handler = handlers[job.name as JobName<Q>] as (job: Job) => Promise<R>;
  return handler(job);
}
