import {
  DataTable,
  Dialog,
  Pager,
  ProblemNotice,
  SelectField,
  TextField,
  useLoad,
  useToast,
} from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { count, money, when } from '../format.js';

// The request log (docs/operations.md, "Request log"): who has it on, the logged requests,
// and one request's bodies. Owners and administrators only: the bodies are users' prompts
// and answers, so the page is not in a viewer's menu and the API refuses them anyway.

type Entry = Schemas['RequestLogSummary'];
const PAGE_SIZE = 50;

export function RequestLogPage() {
  const [draftToken, setDraftToken] = useState('');
  const [tokenId, setTokenId] = useState('');
  const [page, setPage] = useState(1);
  const [open, setOpen] = useState<Entry | null>(null);
  const entries = useLoad(
    () =>
      call(
        api.GET('/api/request-log', {
          params: {
            query: { page, pageSize: PAGE_SIZE, ...(tokenId ? { tokenId: Number(tokenId) } : {}) },
          },
        }),
      ),
    [tokenId, page],
  );
  const tokens = useLoad(
    () => call(api.GET('/api/tokens', { params: { query: { pageSize: 100 } } })),
    [],
  );
  const tokenOptions = (tokens.data?.items ?? []).map((token) => ({
    value: String(token.id),
    label: token.name,
  }));

  return (
    <section aria-labelledby="request-log-title">
      <h1 id="request-log-title">Request log</h1>
      <p class="muted">
        The bodies of the requests of the tokens and teams below, redacted of secrets and cut to the
        gateway&apos;s cap, kept for the metering worker&apos;s retention (7 days unless
        configured). Off for every other token.
      </p>
      <LoggingSettings tokenOptions={tokenOptions} onChanged={() => void entries.reload()} />
      <form
        class="toolbar"
        role="search"
        aria-label="Filter logged requests"
        onSubmit={(event) => {
          event.preventDefault();
          setPage(1);
          setTokenId(draftToken);
        }}
      >
        <SelectField
          label="Token"
          value={draftToken}
          onChange={setDraftToken}
          options={[{ value: '', label: 'Any' }, ...tokenOptions]}
        />
        <button type="submit">Filter</button>
      </form>
      <ProblemNotice error={entries.error} explain={explain} />
      <DataTable
        caption={`Logged requests (${entries.data?.total ?? 0})`}
        rows={entries.data?.items}
        rowKey={(entry) => entry.requestId}
        loading={entries.loading}
        empty="No logged requests."
        columns={[
          { key: 'time', header: 'Time', render: (entry) => when(entry.requestedAt) },
          {
            key: 'token',
            header: 'Token',
            render: (entry) => entry.tokenName ?? `#${entry.tokenId} (deleted)`,
          },
          { key: 'endpoint', header: 'Endpoint', render: (entry) => entry.endpoint },
          { key: 'model', header: 'Model', render: (entry) => entry.model || '—' },
          {
            key: 'status',
            header: 'Status',
            render: (entry) => (
              <span class={`badge badge-${entry.status < 400 ? 'good' : 'bad'}`}>
                {entry.status}
              </span>
            ),
          },
          {
            key: 'size',
            header: 'Kept (request / answer)',
            render: (entry) =>
              `${count(entry.requestChars)}${entry.requestTruncated ? ' (cut)' : ''} / ${count(
                entry.responseChars,
              )}${entry.responseTruncated ? ' (cut)' : ''}`,
          },
          {
            key: 'detail',
            header: 'Bodies',
            hiddenHeader: true,
            render: (entry) => (
              <button type="button" class="link-button" onClick={() => setOpen(entry)}>
                Bodies<span class="visually-hidden"> of request {entry.requestId}</span>
              </button>
            ),
          },
        ]}
      />
      <Pager
        label="logged requests"
        one="logged request"
        page={page}
        pageSize={PAGE_SIZE}
        total={entries.data?.total ?? 0}
        onPage={setPage}
      />
      {open && <EntryDetail requestId={open.requestId} onClose={() => setOpen(null)} />}
    </section>
  );
}

/** Who has the log on, and the switch. */
function LoggingSettings(props: {
  tokenOptions: { value: string; label: string }[];
  onChanged: () => void;
}) {
  const notify = useToast();
  const settings = useLoad(() => call(api.GET('/api/request-log/settings')), []);
  const [token, setToken] = useState('');
  const [team, setTeam] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const change = async (kind: 'tokens' | 'teams', id: number, enabled: boolean) => {
    setBusy(true);
    setError(null);
    try {
      const body = { enabled };
      await call(
        kind === 'tokens'
          ? api.PUT('/api/request-log/tokens/{id}', { params: { path: { id } }, body })
          : api.PUT('/api/request-log/teams/{id}', { params: { path: { id } }, body }),
      );
      await settings.reload();
      notify(
        `Request log ${enabled ? 'on' : 'off'} for ${kind === 'tokens' ? 'token' : 'team'} #${id}.`,
      );
      props.onChanged();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const on = settings.data;
  return (
    <div class="card" aria-labelledby="request-log-on">
      <h2 id="request-log-on">Logging is on for</h2>
      <ProblemNotice error={error ?? settings.error} explain={explain} />
      {on && on.tokens.length === 0 && on.teams.length === 0 && (
        <p>No token and no team: nothing is logged.</p>
      )}
      {on && (on.tokens.length > 0 || on.teams.length > 0) && (
        <ul class="plain-list">
          {on.tokens.map((subject) => (
            <li key={`token-${subject.id}`}>
              Token <strong>{subject.name}</strong>{' '}
              <button
                type="button"
                class="link-button"
                disabled={busy}
                onClick={() => void change('tokens', subject.id, false)}
              >
                Turn off<span class="visually-hidden"> for token {subject.name}</span>
              </button>
            </li>
          ))}
          {on.teams.map((subject) => (
            <li key={`team-${subject.id}`}>
              Team <strong>{subject.name}</strong> (all its tokens){' '}
              <button
                type="button"
                class="link-button"
                disabled={busy}
                onClick={() => void change('teams', subject.id, false)}
              >
                Turn off<span class="visually-hidden"> for team {subject.name}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        class="toolbar"
        aria-label="Turn the request log on for a token"
        onSubmit={(event) => {
          event.preventDefault();
          if (token) void change('tokens', Number(token), true);
        }}
      >
        <SelectField
          label="Token to log"
          value={token}
          onChange={setToken}
          options={[{ value: '', label: 'Choose a token' }, ...props.tokenOptions]}
        />
        <button type="submit" disabled={busy || !token}>
          Turn on
        </button>
      </form>
      <form
        class="toolbar"
        aria-label="Turn the request log on for a team"
        onSubmit={(event) => {
          event.preventDefault();
          if (/^\d+$/.test(team)) void change('teams', Number(team), true);
        }}
      >
        <TextField label="Team id to log" type="number" value={team} onInput={setTeam} />
        <button type="submit" disabled={busy || !/^\d+$/.test(team)}>
          Turn on
        </button>
      </form>
    </div>
  );
}

function EntryDetail(props: { requestId: string; onClose: () => void }) {
  const entry = useLoad(
    () =>
      call(
        api.GET('/api/request-log/{requestId}', {
          params: { path: { requestId: props.requestId } },
        }),
      ),
    [props.requestId],
  );
  const detail = entry.data;
  const rows: [string, string][] = detail
    ? [
        ['Request id', detail.requestId],
        ['Trace id', detail.traceId ?? '— (not traced)'],
        ['Time', when(detail.requestedAt)],
        ['Token', detail.tokenName ?? `#${detail.tokenId} (deleted)`],
        ['Endpoint', detail.endpoint],
        ['Model', detail.model || '—'],
        ['Status', String(detail.status)],
        [
          'Billed',
          detail.usage
            ? `${money(detail.usage.cost)} for ${detail.usage.promptTokens} / ${detail.usage.completionTokens} tokens, ${detail.usage.latencyMs} ms`
            : 'not yet',
        ],
      ]
    : [];
  return (
    <Dialog title="Logged request" onClose={props.onClose}>
      <ProblemNotice error={entry.error} explain={explain} />
      {detail && (
        <>
          <dl class="details">
            {rows.map(([term, value]) => (
              <div key={term}>
                <dt>{term}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
          <h3>Request{detail.requestTruncated ? ' (cut at the cap)' : ''}</h3>
          <pre class="body-text" tabIndex={0} aria-label="Request body">
            {detail.requestBody || '(empty)'}
          </pre>
          <h3>Answer{detail.responseTruncated ? ' (cut at the cap)' : ''}</h3>
          <pre class="body-text" tabIndex={0} aria-label="Answer body">
            {detail.responseBody || '(empty)'}
          </pre>
        </>
      )}
      <div class="form-actions">
        <button type="button" class="secondary" onClick={props.onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
