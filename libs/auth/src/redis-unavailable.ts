import { Logger } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { type ChainableCommander } from 'ioredis';

const logger = new Logger('Redis');

/**
 * Runs Redis work a request cannot do without (sessions, login throttling, round-robin).
 * When Redis cannot be reached the caller gets 503 `service_unavailable` (retry later), not
 * a 500, and the log says why. `what` names the feature: "The session store", "Signing in".
 */
export async function withRedis<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ApiError) throw error;
    logger.error({
      message: `Redis unreachable: ${what} is unavailable`,
      reason: error instanceof Error ? error.message : String(error),
    });
    throw new ApiError('service_unavailable', `${what} is unavailable (Redis); try again shortly`);
  }
}

/** Runs a MULTI block and fails when Redis refused any of its commands. */
export async function commit(transaction: ChainableCommander): Promise<unknown[]> {
  const results = await transaction.exec();
  if (results === null) throw new Error('the Redis transaction was aborted');
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}
