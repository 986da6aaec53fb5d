import { useState } from 'preact/hooks';
import { useToast } from './toasts.js';

/**
 * Runs a change a person asked for on a page (enable, delete, …): on success the page says
 * so in a toast and reloads what it shows; a failure is kept in `error` for the page to
 * show, and cleared when the next change starts.
 */
export function useAction(reload: () => Promise<unknown>) {
  const notify = useToast();
  const [error, setError] = useState<unknown>(null);
  const act = async (work: () => Promise<unknown>, done: string): Promise<void> => {
    setError(null);
    try {
      await work();
      notify(done);
      await reload();
    } catch (failure) {
      setError(failure);
    }
  };
  return { act, error, setError };
}
