import { TextField, useLoad, useToast } from '@switchyard/ui';
import { useState } from 'preact/hooks';
import * as chat from '../api/chat-api.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { LedgerView } from '../components/LedgerView.js';
import { ModelSpendTable } from '../components/ModelSpendTable.js';
import { PeriodPicker, type Period } from '../components/UsageView.js';

/** The user's balance, a code to redeem, and every change of the balance (docs/credits.md). */
export function CreditsPage() {
  const [version, setVersion] = useState(0);
  const balance = useLoad(() => chat.balance(), [version]);
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const notify = useToast();

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const redeemed = await chat.redeem(code.trim());
      setCode('');
      setVersion((v) => v + 1);
      chat.creditsChanged();
      notify(`${redeemed.credits} credits added; your balance is ${redeemed.balance}.`);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="page" aria-busy={balance.loading}>
      <h1>Credits</h1>
      <ErrorNotice error={balance.error} />
      {balance.data !== undefined && (
        <p class="credit-balance">
          Your balance: <strong>{balance.data}</strong> credits
        </p>
      )}
      <section aria-labelledby="redeem-title">
        <h2 id="redeem-title">Redeem a code</h2>
        <form class="card editor" onSubmit={(event) => void submit(event)}>
          <ErrorNotice error={error} />
          <TextField
            label="Code"
            value={code}
            onInput={setCode}
            required
            placeholder="SY-XXXX-XXXX-XXXX"
            autoComplete="off"
          />
          <div class="form-actions">
            <button type="submit" disabled={busy || code.trim() === ''}>
              Redeem
            </button>
          </div>
        </form>
      </section>
      <InviteLink />
      <SpendPerModel version={version} />
      <section aria-labelledby="ledger-title">
        <h2 id="ledger-title">History</h2>
        <LedgerView caption="Your credit history" load={chat.ledger} version={version} />
      </section>
    </main>
  );
}

/** The credits the user spent per model over a period (`GET /api/credits/spend`). */
function SpendPerModel(props: { version: number }) {
  const [days, setDays] = useState<Period>(30);
  const spend = useLoad(() => chat.creditSpend(days), [days, props.version]);
  return (
    <section aria-labelledby="spend-title" aria-busy={spend.loading}>
      <h2 id="spend-title">Spent per model</h2>
      <PeriodPicker value={days} onChange={setDays} />
      <ErrorNotice error={spend.error} />
      <ModelSpendTable
        caption={`Your credits spent per model, last ${days} days`}
        models={spend.data?.models}
        loading={spend.loading}
        empty={`You spent no credits in the last ${days} days.`}
      />
    </section>
  );
}

/** The user's invite link, with a button that copies it. */
function InviteLink() {
  const invite = useLoad(chat.invite, []);
  const notify = useToast();
  if (!invite.data) return <ErrorNotice error={invite.error} />;
  const link = `${window.location.origin}${invite.data.path}`;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(link);
      notify('Invite link copied.');
    } catch {
      notify('Copying is not allowed here: select the link and copy it.');
    }
  };
  return (
    <section aria-labelledby="invite-title">
      <h2 id="invite-title">Invite friends</h2>
      <div class="card">
        <p>
          {invite.data.reward > 0
            ? `When someone registers through your link and chats for the first time, you both get ${invite.data.reward} credits.`
            : 'Invitations earn no credits at the moment.'}
        </p>
        <label for="invite-link">Your invite link</label>
        <div class="invite-link">
          <input id="invite-link" readOnly value={link} onFocus={(e) => e.currentTarget.select()} />
          <button type="button" class="secondary" onClick={() => void copy()}>
            Copy
          </button>
        </div>
      </div>
    </section>
  );
}
