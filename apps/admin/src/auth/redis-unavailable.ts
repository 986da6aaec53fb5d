import { type Logger } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';

/**
 * Sessions and login throttles live in Redis: when it cannot be reached the client gets
 * 503 `service_unavailable` (retry later), not a 500, and the log says why.
 */
export async function unavailableWithoutRedis<T>(
  logger: Logger,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ApiError) throw error;
    logger.error({
      message: 'Redis unreachable: sessions and login throttling are unavailable',
      reason: error instanceof Error ? error.message : String(error),
    });
    throw new ApiError(
      'service_unavailable',
      'Sign-in is unavailable right now (the session store cannot be reached); retry shortly',
    );
  }
}
