import { TextVariable } from '../variables.js';
import { BaseEnv } from './base.js';

export class RedisEnv extends BaseEnv {
  /**
   * One server (`redis://`, `rediss://`) or the master a Sentinel names
   * (`redis+sentinel://[:password@]host1:26379,host2:26379/mymaster[/db]`), parsed and
   * checked by libs/messaging (`redisConnectionOptions`, docs/scaling.md).
   */
  @TextVariable({
    pattern: /^rediss?(\+sentinel)?:\/\/\S+$/,
    expects: 'a URL starting with redis://, rediss:// or redis+sentinel://',
  })
  REDIS_URL: string = 'redis://127.0.0.1:6379';

  /** A Redis Cluster's nodes, `host:port` comma-separated; REDIS_URL then gives credentials. */
  @TextVariable({
    optional: true,
    pattern: /^[^,\s]+(,[^,\s]+)*$/,
    expects: 'host:port, comma-separated',
  })
  REDIS_CLUSTER_NODES?: string;

  /** Namespace of every Redis key, channel and queue, so installations and test runs never meet. */
  @TextVariable({
    pattern: /^[a-z0-9][a-z0-9_-]{0,31}$/,
    expects: 'lowercase letters, digits, - or _ (at most 32)',
  })
  REDIS_PREFIX: string = 'sy';
}
