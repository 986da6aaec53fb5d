import { ApiError } from '@switchyard/contracts';
import { type ChainableCommander } from 'ioredis';

/** Runs a MULTI block and fails when Redis refused any of its commands. */
export async function commit(transaction: ChainableCommander): Promise<unknown[]> {
  const results = await transaction.exec();
  if (results === null) throw new Error('the Redis transaction was aborted');
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

/**
 * Runs Redis work on which a request depends (sessions, login throttling, round-robin);
 * when Redis cannot be reached the caller gets 503 `service_unavailable`, not a 500.
 */
export async function withRedis<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError('service_unavailable', `${what} is unavailable (Redis); try again shortly`);
  }
}
