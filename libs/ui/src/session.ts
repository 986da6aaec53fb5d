import { useEffect, useState } from 'preact/hooks';

/** What an app's API client offers for its sign-in session. */
export interface SessionClient<Me> {
  /** Whether a session token is stored. */
  hasToken(): boolean;
  clear(): void;
  /** Registers what to do when the API says the session is over. */
  whenUnauthenticated(handler: () => void): void;
  me(): Promise<Me>;
  logout(): Promise<unknown>;
}

export type SessionState<Me, Other extends { kind: string } = never> =
  { kind: 'checking' } | { kind: 'signed-out' } | { kind: 'signed-in'; me: Me } | Other;

/**
 * Who is signed in, checked once the app starts and again on `check`. A 401 on any call
 * signs out (through `whenUnauthenticated`); any other failure of the check is kept in
 * `error` for the app to show with a way to try again. `stateOf` turns a failure that is
 * a state of the app's own (the dashboard's forced password change) into that state.
 */
export function useSession<Me, Other extends { kind: string } = never>(
  client: SessionClient<Me>,
  stateOf?: (failure: unknown) => Other | undefined,
) {
  const [state, setState] = useState<SessionState<Me, Other>>({ kind: 'checking' });
  const [error, setError] = useState<unknown>(null);

  const check = async (): Promise<void> => {
    if (!client.hasToken()) {
      setState({ kind: 'signed-out' });
      return;
    }
    try {
      setState({ kind: 'signed-in', me: await client.me() });
      setError(null);
    } catch (failure) {
      const other = stateOf?.(failure);
      if (other) setState(other);
      else if (client.hasToken()) setError(failure);
    }
  };

  useEffect(() => {
    client.whenUnauthenticated(() => {
      client.clear();
      setState({ kind: 'signed-out' });
    });
    void check();
  }, []);

  const signOut = async (): Promise<void> => {
    try {
      await client.logout();
    } catch {
      // The session ends here whatever the server says.
    }
    client.clear();
    setState({ kind: 'signed-out' });
  };

  return { state, setState, error, check, signOut };
}
