import { IntegerVariable } from '../variables.js';
import { SecretStoreEnv } from './database.js';

// Sign-in throttling, read by both apps that sign people in, admin and chat
// (docs/reliability.md, "Sign-in throttling"). The app's class extends this one and sets
// its own defaults where they differ.

export class LoginThrottleEnv extends SecretStoreEnv {
  /**
   * Failed sign-ins on one account from one client address before each further one doubles
   * the wait there (docs/reliability.md, "Sign-in throttling").
   */
  @IntegerVariable(1, 1000)
  LOGIN_MAX_FAILURES_PER_ACCOUNT: number = 5;

  /** Failed sign-ins from one client address, over all accounts, before each doubles the wait. */
  @IntegerVariable(1, 100_000)
  LOGIN_MAX_FAILURES_PER_IP: number = 20;

  /**
   * Failed sign-ins on one account from all addresses within a day before it is refused from
   * everywhere (guessing from many addresses); the admin CLI's `unlock-login` lifts it
   * (`--app chat` for a chat account).
   */
  @IntegerVariable(10, 10_000_000)
  LOGIN_ACCOUNT_CEILING: number = 1000;

  /** The wait after the first failure past the free ones; each further failure doubles it. */
  @IntegerVariable(1, 3600)
  LOGIN_FIRST_DELAY_SECONDS: number = 1;

  /** The longest wait one address is given (well under the day after which failures are forgotten). */
  @IntegerVariable(1, 6 * 3600)
  LOGIN_MAX_DELAY_SECONDS: number = 3600;
}
