import { IntegerVariable, PortVariable } from '../variables.js';
import { SecretStoreEnv } from './database.js';

export class RouterEnv extends SecretStoreEnv {
  /** Health and metrics only; the router's work arrives over Redis. */
  @PortVariable()
  ROUTER_OPS_PORT: number = 3003;

  /** How often automatically disabled keys and open breakers are probed. */
  @IntegerVariable(100, 3_600_000)
  PROBE_INTERVAL_MS: number = 60_000;
}
