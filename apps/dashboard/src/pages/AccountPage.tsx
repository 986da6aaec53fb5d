import { ProblemNotice } from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain } from '../api/client.js';
import { useMe } from '../me.js';
import { PasswordPage } from './PasswordPage.js';

export function AccountPage(props: { onSignOut: () => void }) {
  const me = useMe();
  const [error, setError] = useState<unknown>(null);

  const signOutEverywhere = async () => {
    setError(null);
    try {
      await call(api.POST('/api/auth/logout-everywhere'));
      props.onSignOut();
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title">Account</h1>
      <dl class="details">
        <div>
          <dt>Username</dt>
          <dd>{me.username}</dd>
        </div>
        <div>
          <dt>Role</dt>
          <dd>{me.role}</dd>
        </div>
      </dl>
      <PasswordPage onChanged={() => undefined} />
      <div class="card">
        <h2>Sessions</h2>
        <ProblemNotice error={error} explain={explain} />
        <div class="form-actions">
          <button type="button" class="secondary" onClick={props.onSignOut}>
            Sign out
          </button>
          <button type="button" class="danger" onClick={() => void signOutEverywhere()}>
            Sign out everywhere
          </button>
        </div>
      </div>
    </section>
  );
}
