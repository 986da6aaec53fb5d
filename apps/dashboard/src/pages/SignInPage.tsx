import { ProblemNotice, TextField, fieldErrors } from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';

export function SignInPage(props: { onSignedIn: (answer: Schemas['LoginResponse']) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = fieldErrors(error);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = await call(
        api.POST('/api/auth/login', { body: { username: username.trim(), password } }),
      );
      props.onSignedIn(answer);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="centered">
      <form class="card auth" onSubmit={(event) => void submit(event)}>
        <h1>Sign in to the gateway</h1>
        <ProblemNotice error={error} explain={explain} />
        <TextField
          label="Username"
          value={username}
          onInput={setUsername}
          autoComplete="username"
          required
          error={fields.username}
        />
        <TextField
          label="Password"
          type="password"
          value={password}
          onInput={setPassword}
          autoComplete="current-password"
          required
          error={fields.password}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
