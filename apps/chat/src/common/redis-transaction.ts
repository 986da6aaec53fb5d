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
