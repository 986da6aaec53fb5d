/**
 * Stops each in order, every one even when one before it failed, so nothing a test started
 * outlives it; then throws the first failure.
 */
export async function stopEach(...stops: (() => Promise<unknown> | undefined)[]): Promise<void> {
  let failed = false;
  let first: unknown;
  for (const stop of stops) {
    try {
      await stop();
    } catch (error) {
      if (!failed) first = error;
      failed = true;
    }
  }
  if (failed) throw first;
}
