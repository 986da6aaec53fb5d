import { IntegerVariable, ListVariable, PortVariable } from '../variables.js';
import { BaseEnv } from './base.js';

export class MockUpstreamEnv extends BaseEnv {
  @PortVariable()
  MOCK_UPSTREAM_PORT: number = 18080;

  /**
   * The account pool: `key[:rpm[:tpm[:banned]]]`, comma-separated; `0` is no limit.
   * Example: `sk-mock-1:60:100000,sk-mock-2:60:100000,sk-mock-banned:0:0:banned`.
   */
  @ListVariable(/^[A-Za-z0-9_.-]+(:\d+(:\d+(:banned)?)?)?$/, 'key[:rpm[:tpm[:banned]]] accounts')
  MOCK_ACCOUNTS: string[] = ['sk-mock-demo'];

  @IntegerVariable(0, 600_000)
  MOCK_LATENCY_MS: number = 0;

  /** Delay between two streamed chunks. */
  @IntegerVariable(0, 60_000)
  MOCK_CHUNK_DELAY_MS: number = 0;

  /** Percentage of requests answered with a 500. */
  @IntegerVariable(0, 100)
  MOCK_ERROR_RATE: number = 0;
}
