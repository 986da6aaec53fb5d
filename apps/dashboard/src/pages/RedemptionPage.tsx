import {
  DataTable,
  Dialog,
  Pager,
  ProblemNotice,
  TextField,
  fieldErrors,
  useLoad,
} from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { dollarsToMicros, download, money, when } from '../format.js';
import { useCanEdit } from '../me.js';

type Created = Schemas['CreatedRedemptionBatchResponse'];
const PAGE_SIZE = 20;

/** Redemption codes for balance teams: made in batches, shown and exported once. */
export function RedemptionPage() {
  const canEdit = useCanEdit();
  const [page, setPage] = useState(1);
  const batches = useLoad(
    () =>
      call(
        api.GET('/api/redemption-batches', { params: { query: { page, pageSize: PAGE_SIZE } } }),
      ),
    [page],
  );
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  return (
    <section aria-labelledby="codes-title">
      <div class="page-header">
        <h1 id="codes-title">Redemption codes</h1>
        {canEdit && (
          <button type="button" onClick={() => setCreating(true)}>
            Generate codes
          </button>
        )}
      </div>
      <p class="muted">
        Members redeem a code for a team that runs on a prepaid balance. Codes are shown, and can be
        downloaded as CSV, only when they are generated.
      </p>
      <ProblemNotice error={batches.error} explain={explain} />
      <DataTable
        caption={`Batches (${batches.data?.total ?? 0})`}
        rows={batches.data?.items}
        rowKey={(batch) => batch.id}
        loading={batches.loading}
        empty="No codes generated yet."
        columns={[
          { key: 'id', header: 'Batch', render: (batch) => `#${batch.id}` },
          { key: 'value', header: 'Each worth', render: (batch) => money(batch.value) },
          {
            key: 'used',
            header: 'Used',
            render: (batch) => (
              <>
                <progress
                  class="bar"
                  max={batch.count}
                  value={batch.used}
                  aria-label={`Codes of batch ${batch.id} used`}
                />
                <div class="muted">
                  {batch.used} used, {batch.unused} unused of {batch.count}
                </div>
              </>
            ),
          },
          {
            key: 'expires',
            header: 'Expires',
            render: (batch) =>
              batch.expiresAt ? (
                <>
                  {when(batch.expiresAt)}{' '}
                  {batch.expired && <span class="badge badge-bad">Expired</span>}
                </>
              ) : (
                'Never'
              ),
          },
          { key: 'note', header: 'Note', render: (batch) => batch.note || '—' },
          { key: 'created', header: 'Made', render: (batch) => when(batch.createdAt) },
        ]}
      />
      <Pager
        label="batches"
        one="batch"
        page={page}
        pageSize={PAGE_SIZE}
        total={batches.data?.total ?? 0}
        onPage={setPage}
      />
      {creating && (
        <GenerateForm
          onClose={() => setCreating(false)}
          onCreated={(made) => {
            setCreating(false);
            setCreated(made);
            void batches.reload();
          }}
        />
      )}
      {created && <CreatedCodes created={created} onClose={() => setCreated(null)} />}
    </section>
  );
}

function GenerateForm(props: { onClose: () => void; onCreated: (made: Created) => void }) {
  const [value, setValue] = useState('5');
  const [count, setCount] = useState('10');
  const [expiresAt, setExpiresAt] = useState('');
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = fieldErrors(error);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      props.onCreated(
        await call(
          api.POST('/api/redemption-batches', {
            body: {
              value: dollarsToMicros(value) ?? -1,
              count: Number(count),
              expiresAt: expiresAt === '' ? null : new Date(expiresAt).toISOString(),
              note: note.trim(),
            },
          }),
        ),
      );
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title="Generate redemption codes" onClose={props.onClose}>
      <form class="editor" onSubmit={(event) => void submit(event)}>
        <ProblemNotice error={error} explain={explain} />
        <div class="form-grid">
          <TextField
            label="Each code worth (US dollars)"
            value={value}
            onInput={setValue}
            error={fields.value}
          />
          <TextField
            label="How many (at most 1000)"
            type="number"
            min={1}
            value={count}
            onInput={setCount}
            error={fields.count}
          />
        </div>
        <TextField
          label="Expires at (empty: never)"
          type="datetime-local"
          value={expiresAt}
          onInput={setExpiresAt}
          error={fields.expiresAt}
        />
        <TextField label="Note" value={note} onInput={setNote} error={fields.note} />
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            Generate
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** The codes of a new batch, shown this once, with their one CSV download. */
function CreatedCodes(props: { created: Created; onClose: () => void }) {
  const { batch, codes, csv } = props.created;
  const [downloaded, setDownloaded] = useState(false);
  return (
    <Dialog title={`Batch #${batch.id}: ${codes.length} codes`} onClose={props.onClose}>
      <p>
        <strong>Save them now:</strong> the codes are shown only this once; the gateway keeps only a
        hash of each.
      </p>
      <button
        type="button"
        disabled={downloaded}
        onClick={() => {
          download(`redemption-codes-batch-${batch.id}.csv`, 'text/csv', csv);
          setDownloaded(true);
        }}
      >
        {downloaded ? 'CSV downloaded' : 'Download CSV'}
      </button>
      <pre class="snippet" tabIndex={0} aria-label="The codes">
        {codes.join('\n')}
      </pre>
      <div class="form-actions">
        <button type="button" class="secondary" onClick={props.onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}
