import { ProblemNotice, TextField, fieldErrors, useToast } from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain } from '../api/client.js';

/**
 * Change the password: forced at the first sign-in (nothing else works until then), and
 * on the Account page. Other sessions end; this one stays.
 */
export function PasswordPage(props: { forced?: boolean; onChanged: () => Promise<void> | void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const notify = useToast();
  const fields = fieldErrors(error);
  const mismatch = repeat !== '' && repeat !== next ? 'The two new passwords differ.' : undefined;

  const submit = async (event: Event) => {
    event.preventDefault();
    if (mismatch) return;
    setBusy(true);
    setError(null);
    try {
      await call(
        api.POST('/api/auth/password', { body: { currentPassword: current, newPassword: next } }),
      );
      notify('Password changed. Other sessions were signed out.');
      setCurrent('');
      setNext('');
      setRepeat('');
      await props.onChanged();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const Heading = props.forced ? 'h1' : 'h2';
  return (
    <form class="card auth" onSubmit={(event) => void submit(event)}>
      <Heading>{props.forced ? 'Choose a new password' : 'Change password'}</Heading>
      {props.forced && (
        <p>This is your first sign-in: replace the initial password before going on.</p>
      )}
      <ProblemNotice error={error} explain={explain} />
      <TextField
        label="Current password"
        type="password"
        value={current}
        onInput={setCurrent}
        autoComplete="current-password"
        required
        error={fields.currentPassword}
      />
      <TextField
        label="New password"
        type="password"
        value={next}
        onInput={setNext}
        autoComplete="new-password"
        required
        hint="At least 12 characters."
        error={fields.newPassword}
      />
      <TextField
        label="Repeat the new password"
        type="password"
        value={repeat}
        onInput={setRepeat}
        autoComplete="new-password"
        required
        error={mismatch}
      />
      <button type="submit" disabled={busy}>
        Change password
      </button>
    </form>
  );
}
