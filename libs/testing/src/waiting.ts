import { setTimeout as sleep } from 'node:timers/promises';

// Tests wait on conditions, never on the speed of a quiet machine: CI shares its two cores
// with other runs, and there a step takes several times what it takes alone (docs/architecture.md,
// "Waiting in tests"). A condition that holds ends the wait at once, so a generous bound
// costs nothing when the code works; it only decides how long a real hang takes to fail.

/**
 * The bound of a wait for something that should happen soon (an event, a row, a snapshot):
 * many times what it takes on a quiet machine, yet well inside a test's own timeout, so a
 * hang fails with the wait's message rather than Jest's.
 */
export const WAIT_TIMEOUT_MS = 20_000;

/**
 * The bound of one app's start (`startApp`): a few seconds on a quiet machine.
 * TEST_APP_START_TIMEOUT_MS lends a machine busier still more time.
 */
export const APP_START_TIMEOUT_MS = Number(process.env.TEST_APP_START_TIMEOUT_MS ?? 60_000);

export interface WaitOptions {
  /** How long to keep trying (WAIT_TIMEOUT_MS unless said). */
  timeoutMs?: number;
  /** The pause between two tries. */
  intervalMs?: number;
  /**
   * What is waited for, for the message of a wait that times out; a function is asked only
   * then, so the message can show what was seen instead (a process's output, say).
   */
  what?: string | (() => string);
}

/**
 * Tries `condition` until it returns something other than `undefined` or `false`, and
 * resolves with that. An error it throws counts as "not yet" (and is quoted if the wait
 * times out), unless it is a `WaitAborted`, which ends the wait at once.
 */
export async function waitFor<T>(
  condition: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = WAIT_TIMEOUT_MS, intervalMs = 25, what = 'condition' }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      if (error instanceof WaitAborted) throw error;
      lastError = error;
    }
    if (Date.now() > deadline) {
      const described = typeof what === 'function' ? what() : what;
      const cause =
        lastError instanceof Error
          ? `: ${String(lastError)}`
          : lastError === undefined
            ? ''
            : `: ${JSON.stringify(lastError)}`;
      throw new Error(`${described} not reached within ${timeoutMs} ms${cause}`);
    }
    await sleep(intervalMs);
  }
}

/** Thrown by a `waitFor` condition that knows the wait is hopeless (a process exited, say). */
export class WaitAborted extends Error {}
