import { useState } from 'preact/hooks';
import { useToast } from './toasts.js';

/**
 * Runs a change a person asked for on a page (enable, delete, …): on success the page
 * reloads what it shows, then says so in a toast (so what the toast says is on the page
 * when it appears); a failure is kept in `error` for the page to show, and cleared when the
 * next change starts.
 */
export function useAction(reload: () => Promise<unknown>) {
  const notify = useToast();
  const [error, setError] = useState<unknown>(null);
  const act = async (work: () => Promise<unknown>, done: string): Promise<void> => {
    setError(null);
    try {
      await work();
      await reload();
      notify(done);
    } catch (failure) {
      setError(failure);
    }
  };
  return { act, error, setError };
}
