import { DataTable, LineChart, Link, ProblemNotice, SelectField, useLoad } from '@switchyard/ui';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { BudgetBar } from '../components/BudgetBar.js';
import { useTeamOptions } from '../components/teamOptions.js';
import { count, money, timeLeft, when } from '../format.js';

type Range = Schemas['UsageSeriesResponse']['range'];
type Split = Schemas['UsageSeriesResponse']['splitBy'];
type Metric = 'requests' | 'failures' | 'tokens' | 'cost';

const RANGE_MS: Record<Range, number> = {
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
};
const METRICS: { value: Metric; label: string }[] = [
  { value: 'requests', label: 'Requests' },
  { value: 'failures', label: 'Errors' },
  { value: 'tokens', label: 'Tokens (in + out)' },
  { value: 'cost', label: 'Cost' },
];
/** How often channel health is read again: the router changes it within seconds. */
const HEALTH_POLL_MS = 5000;

export function OverviewPage() {
  const [range, setRange] = useState<Range>('24h');
  const [split, setSplit] = useState<Split>('model');
  const [metric, setMetric] = useState<Metric>('requests');
  const [teamId, setTeamId] = useState('');
  const teams = useTeamOptions('Every team and none');
  const team = teamId ? { teamId: Number(teamId) } : {};
  const series = useLoad(
    () =>
      call(
        api.GET('/api/overview/series', {
          params: { query: { range, splitBy: split, ...team } },
        }),
      ),
    [range, split, teamId],
  );
  const from = useMemo(
    () => new Date(Date.now() - RANGE_MS[range]).toISOString(),
    [range, series.data],
  );
  const spenders = useLoad(
    () =>
      call(
        api.GET('/api/usage/summary', { params: { query: { groupBy: 'token', from, ...team } } }),
      ),
    [from, teamId],
  );

  const chart = useMemo(() => {
    if (!series.data) return null;
    return {
      times: series.data.buckets.map((bucket) => Date.parse(bucket) / 1000),
      lines: series.data.lines.map((line) => ({
        label: line.label,
        values:
          metric === 'tokens'
            ? line.promptTokens.map((value, i) => value + (line.completionTokens[i] ?? 0))
            : line[metric],
      })),
    };
  }, [series.data, metric]);
  const totals = spenders.data?.totals;

  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <div class="toolbar">
        <SelectField
          label="Period"
          value={range}
          onChange={(value) => setRange(value as Range)}
          options={[
            { value: '24h', label: 'Last 24 hours' },
            { value: '7d', label: 'Last 7 days' },
            { value: '30d', label: 'Last 30 days' },
          ]}
        />
        <SelectField
          label="Split by"
          value={split}
          onChange={(value) => setSplit(value as Split)}
          options={[
            { value: 'model', label: 'Model' },
            { value: 'channel', label: 'Channel' },
            { value: 'token', label: 'Token' },
            { value: 'team', label: 'Team' },
          ]}
        />
        <SelectField label="Team" value={teamId} onChange={setTeamId} options={teams} />
        <SelectField
          label="Show"
          value={metric}
          onChange={(value) => setMetric(value as Metric)}
          options={METRICS}
        />
        <button type="button" class="secondary" onClick={() => void series.reload()}>
          Refresh
        </button>
      </div>
      <ProblemNotice error={series.error ?? spenders.error} explain={explain} />
      <BudgetsNeedingAttention />
      <dl class="stats" aria-label="Totals for the period">
        <div class="stat">
          <dt>Requests</dt>
          <dd>{totals ? count(totals.requests) : '…'}</dd>
        </div>
        <div class="stat">
          <dt>Errors</dt>
          <dd>{totals ? count(totals.failures) : '…'}</dd>
        </div>
        <div class="stat">
          <dt>Tokens in</dt>
          <dd>{totals ? count(totals.promptTokens) : '…'}</dd>
        </div>
        <div class="stat">
          <dt>Tokens out</dt>
          <dd>{totals ? count(totals.completionTokens) : '…'}</dd>
        </div>
        <div class="stat">
          <dt>Cost</dt>
          <dd>{totals ? money(totals.cost) : '…'}</dd>
        </div>
      </dl>
      {chart && chart.lines.length > 0 && (
        <LineChart
          label={`${METRICS.find((m) => m.value === metric)?.label} over time by ${split}`}
          times={chart.times}
          lines={chart.lines}
          format={metric === 'cost' ? money : count}
        />
      )}
      {chart && chart.lines.length === 0 && (
        <p class="table-state">No traffic in this period yet.</p>
      )}
      <h2>Top spenders</h2>
      <DataTable
        caption="Tokens by cost in the period"
        rows={spenders.data?.items.slice(0, 10)}
        rowKey={(row) => row.key ?? 'none'}
        loading={spenders.loading}
        empty="No token has spent anything in this period."
        columns={[
          { key: 'token', header: 'Token', render: (row) => row.label ?? `#${row.key ?? '—'}` },
          { key: 'requests', header: 'Requests', render: (row) => count(row.requests) },
          {
            key: 'tokens',
            header: 'Tokens',
            render: (row) => count(row.promptTokens + row.completionTokens),
          },
          { key: 'cost', header: 'Cost', render: (row) => money(row.cost) },
        ]}
      />
      <ChannelHealth />
    </section>
  );
}

/** How many of the fullest budgets are read: the list comes closest to its cap first. */
const BUDGETS_READ = 100;

/**
 * The budgets past their soft threshold (or spent) this period: what metering alerts on
 * (docs/budgets.md, "Alerts"), shown where administrators look first. Nothing when none is.
 */
function BudgetsNeedingAttention() {
  const budgets = useLoad(
    () => call(api.GET('/api/budgets', { params: { query: { pageSize: BUDGETS_READ } } })),
    [],
  );
  const needing = (budgets.data?.items ?? []).filter((b) => b.softReached || b.exceeded);
  if (needing.length === 0) return null;
  return (
    <section class="notice" aria-labelledby="attention-title">
      <h2 id="attention-title">Budgets needing attention</h2>
      <p>
        {needing.length === 1 ? 'One budget is' : `${needing.length} budgets are`} past the alert
        threshold or spent this period. <Link href="/budgets">See every budget</Link>
      </p>
      <ul>
        {needing.map((budget) => (
          <li key={budget.id}>
            <strong>{budget.label}</strong>
            <BudgetBar budget={budget} />
          </li>
        ))}
      </ul>
    </section>
  );
}

const STATE_TEXT: Record<Schemas['ChannelHealth']['state'], { text: string; tone: string }> = {
  routing: { text: 'Routing', tone: 'good' },
  cooling_down: { text: 'Cooling down', tone: 'warn' },
  breaker_open: { text: 'Breaker open', tone: 'bad' },
  no_keys: { text: 'No enabled key', tone: 'bad' },
  disabled: { text: 'Disabled', tone: 'warn' },
  auto_disabled: { text: 'Automatically disabled', tone: 'bad' },
  unknown: { text: 'Waiting for the router', tone: 'warn' },
};

/** Every channel as routing sees it, read again every few seconds without a reload. */
function ChannelHealth() {
  const [health, setHealth] = useState<Schemas['ChannelHealthResponse'] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let stopped = false;
    const read = async () => {
      try {
        const answer = await call(api.GET('/api/overview/health'));
        if (!stopped) {
          setHealth(answer);
          setError(null);
        }
      } catch (failure) {
        if (!stopped) setError(failure);
      }
    };
    void read();
    const timer = setInterval(() => void read(), HEALTH_POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);

  return (
    <section aria-labelledby="health-title">
      <h2 id="health-title">Channel health</h2>
      <p class="help">
        Updated every {HEALTH_POLL_MS / 1000} s
        {health?.snapshotAt ? `; routing snapshot of ${when(health.snapshotAt)}` : ''}.
      </p>
      <ProblemNotice error={error} explain={explain} />
      {health?.channels.length === 0 && <p class="table-state">No channels yet.</p>}
      <ul class="health-grid" aria-live="polite">
        {health?.channels.map((channel) => {
          const state = STATE_TEXT[channel.state];
          return (
            <li key={channel.id}>
              <strong>{channel.name}</strong>{' '}
              <span class={`badge badge-${state.tone}`}>{state.text}</span>
              {channel.statusReason && (
                <p class="muted">
                  {channel.statusReason}
                  {channel.statusChangedAt ? ` (${when(channel.statusChangedAt)})` : ''}
                </p>
              )}
              <ul class="key-list" aria-label={`Keys of ${channel.name}`}>
                {channel.keys.map((key) => (
                  <li key={key.id}>
                    <code>…{key.lastFour}</code>{' '}
                    {key.status !== 'enabled' ? (
                      <span class="badge badge-bad">
                        {key.status === 'auto_disabled' ? 'Automatically disabled' : 'Disabled'}
                      </span>
                    ) : key.coolingUntil ? (
                      <span class="badge badge-warn">
                        Cooling down, {timeLeft(key.coolingUntil)} left
                      </span>
                    ) : (
                      <span class="badge badge-good">OK</span>
                    )}
                    {key.statusReason && <span class="muted"> {key.statusReason}</span>}
                  </li>
                ))}
              </ul>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
