import { useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { DetailsView } from '../../components/DetailsView.js';
import { ErrorNotice } from '../../components/ErrorNotice.js';
import { useLoad, useToast } from '@switchyard/ui';

export function EditionPage() {
  const edition = useLoad(chat.edition, []);
  const [license, setLicense] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const notify = useToast();
  const name = edition.data?.['edition'];

  const activate = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await chat.activateLicense(license.trim());
      setLicense('');
      notify('License activated.');
      await edition.reload();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="edition-title">
      <h1 id="edition-title">Edition and license</h1>
      <p class="lead">
        The community edition accepts any upstream address. The Plus edition accepts only the
        recommended relays until a license is activated.
      </p>
      <ErrorNotice error={edition.error} />
      {edition.data && (
        <div class="card">
          <h2>
            {name === 'plus'
              ? 'Plus edition'
              : name === 'community'
                ? 'Community edition'
                : 'Current edition'}
          </h2>
          <DetailsView details={edition.data} label="Edition details" />
        </div>
      )}
      <form class="card editor" onSubmit={(event) => void activate(event)}>
        <h2>Activate a license</h2>
        <ErrorNotice error={error} />
        <label>
          License
          <textarea
            required
            rows={5}
            spellcheck={false}
            value={license}
            onInput={(event) => setLicense(event.currentTarget.value)}
          />
        </label>
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            Activate
          </button>
        </div>
      </form>
    </section>
  );
}
