import { useState } from 'preact/hooks';
import * as chat from '../api/chat-api.js';
import { client } from '../api/client.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Link } from '@switchyard/ui';

export function AuthPage(props: { mode: 'login' | 'register'; onSignedIn: () => Promise<void> }) {
  const registering = props.mode === 'register';
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [email, setEmail] = useState('');
  // An invite link is /register?invite=CODE (docs/credits.md, "Invitations").
  const [invite] = useState(() => new URLSearchParams(window.location.search).get('invite') ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (registering) {
        await chat.register(username, password, email.trim() || undefined, invite || undefined);
      }
      client.session.save(await chat.login(username, password));
      await props.onSignedIn();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="centered">
      <form class="card auth" onSubmit={(event) => void submit(event)} aria-busy={busy}>
        <h1>{registering ? 'Create an account' : 'Sign in'}</h1>
        {registering && invite && (
          <p class="help">You were invited: you both get credits after your first reply.</p>
        )}
        <ErrorNotice error={error} />
        <label>
          Username
          <input
            name="username"
            autocomplete="username"
            required
            value={username}
            onInput={(event) => setUsername(event.currentTarget.value)}
          />
        </label>
        {registering && (
          <label>
            Email <span class="optional">(optional)</span>
            <input
              name="email"
              type="email"
              autocomplete="email"
              value={email}
              onInput={(event) => setEmail(event.currentTarget.value)}
            />
          </label>
        )}
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete={registering ? 'new-password' : 'current-password'}
            required
            value={password}
            onInput={(event) => setPassword(event.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          {registering ? 'Create account' : 'Sign in'}
        </button>
        <p>
          {registering ? (
            <>
              Already have an account? <Link href="/login">Sign in</Link>
            </>
          ) : (
            <>
              New here? <Link href="/register">Create an account</Link>
            </>
          )}
        </p>
      </form>
    </main>
  );
}
