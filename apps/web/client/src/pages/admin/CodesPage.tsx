import {
  DataTable,
  FormActions,
  Pager,
  SelectField,
  TextField,
  fieldErrors,
  useLoad,
  type Column,
} from '@switchyard/ui';
import { useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type CodeBatch, type CreatedCodes } from '../../api/types.js';
import { ErrorNotice } from '../../components/ErrorNotice.js';

const PAGE_SIZE = 20;

const COLUMNS: Column<CodeBatch>[] = [
  { key: 'id', header: 'Batch', render: (batch) => batch.id },
  { key: 'note', header: 'Note', render: (batch) => batch.note || '—' },
  {
    key: 'gives',
    header: 'Each code gives',
    render: (batch) => (batch.planName ? `plan ${batch.planName}` : `${batch.credits} credits`),
  },
  { key: 'used', header: 'Redeemed', render: (batch) => `${batch.redeemed} of ${batch.count}` },
  {
    key: 'expires',
    header: 'Expires',
    render: (batch) => (batch.expiresAt ? new Date(batch.expiresAt).toLocaleString() : 'never'),
  },
  { key: 'created', header: 'Made', render: (batch) => new Date(batch.createdAt).toLocaleString() },
];

/** Redemption codes: made in batches, each code shown once (docs/credits.md). */
export function CodesPage() {
  const [page, setPage] = useState(1);
  const batches = useLoad(() => chat.listCodeBatches(page, PAGE_SIZE), [page]);
  const [making, setMaking] = useState(false);
  const [made, setMade] = useState<CreatedCodes | null>(null);
  return (
    <section aria-labelledby="codes-title">
      <div class="page-header">
        <h1 id="codes-title">Redemption codes</h1>
        <button type="button" onClick={() => setMaking(true)}>
          Make codes
        </button>
      </div>
      <p class="lead">
        Each code adds its credits to the balance of the one user who redeems it first, or puts them
        on its plan. Codes are shown once, when made, and kept only as hashes: copy them before
        leaving the page.
      </p>
      {making && (
        <CodesForm
          onCancel={() => setMaking(false)}
          onMade={async (created) => {
            setMaking(false);
            setMade(created);
            await batches.reload();
          }}
        />
      )}
      {made && (
        <div class="card" role="status">
          <h2>
            {made.codes.length} codes of{' '}
            {made.batch.planName
              ? `the plan ${made.batch.planName}`
              : `${made.batch.credits} credits`}{' '}
            (batch {made.batch.id})
          </h2>
          <p>Copy them now: they are not shown again.</p>
          <label>
            Codes
            <textarea
              readOnly
              rows={Math.min(made.codes.length, 10)}
              value={made.codes.join('\n')}
            />
          </label>
          <button type="button" class="secondary" onClick={() => setMade(null)}>
            I have copied them
          </button>
        </div>
      )}
      <ErrorNotice error={batches.error} />
      <DataTable
        caption={`Batches (${batches.data?.total ?? 0})`}
        columns={COLUMNS}
        rows={batches.data?.items}
        rowKey={(batch) => batch.id}
        loading={batches.loading}
        empty="No codes made yet."
      />
      <Pager
        label="batches"
        one="batch"
        page={page}
        pageSize={PAGE_SIZE}
        total={batches.data?.total ?? 0}
        onPage={setPage}
      />
    </section>
  );
}

function CodesForm(props: { onCancel: () => void; onMade: (made: CreatedCodes) => Promise<void> }) {
  const plans = useLoad(chat.listPlans, []);
  const [gives, setGives] = useState('credits');
  const [credits, setCredits] = useState('100');
  const [count, setCount] = useState('10');
  const [expires, setExpires] = useState('');
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = fieldErrors(error);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await props.onMade(
        await chat.createCodes({
          ...(gives === 'credits' ? { credits: Number(credits) } : { planId: Number(gives) }),
          count: Number(count),
          note: note.trim(),
          ...(expires === '' ? {} : { expiresAt: new Date(expires).toISOString() }),
        }),
      );
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card editor" onSubmit={(event) => void submit(event)} aria-labelledby="codes-form">
      <h2 id="codes-form">Make codes</h2>
      <ErrorNotice error={error} />
      <ErrorNotice error={plans.error} />
      <SelectField
        label="Each code gives"
        value={gives}
        options={[
          { value: 'credits', label: 'Credits' },
          ...(plans.data?.items ?? [])
            .filter((plan) => !plan.disabled)
            .map((plan) => ({
              value: String(plan.id),
              label: `Plan ${plan.name} (${plan.credits} credits a ${plan.period})`,
            })),
        ]}
        onChange={setGives}
        error={fields['planId']}
      />
      {gives === 'credits' && (
        <TextField
          label="Credits per code"
          type="number"
          min={1}
          required
          value={credits}
          onInput={setCredits}
          error={fields['credits']}
        />
      )}
      <TextField
        label="How many codes"
        type="number"
        min={1}
        required
        value={count}
        onInput={setCount}
        error={fields['count']}
        hint="At most 1,000 in one batch."
      />
      <TextField
        label="Expires"
        type="datetime-local"
        value={expires}
        onInput={setExpires}
        error={fields['expiresAt']}
        hint="Your local time. Empty: the codes never expire."
      />
      <TextField label="Note" value={note} onInput={setNote} error={fields['note']} />
      <FormActions submit="Make codes" busy={busy} onCancel={props.onCancel} />
    </form>
  );
}
