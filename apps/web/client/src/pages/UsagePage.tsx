import { DataTable, LineChart, useLoad, type Column } from '@switchyard/ui';
import { useMemo } from 'preact/hooks';
import * as chat from '../api/chat-api.js';
import { type UsageDay } from '../api/types.js';
import { DetailsView } from '../components/DetailsView.js';
import { ErrorNotice } from '../components/ErrorNotice.js';

const DAYS = 30;
const count = (value: number): string => value.toLocaleString('en-US');

const COLUMNS: Column<UsageDay>[] = [
  { key: 'day', header: 'Day (UTC)', render: (day) => day.day },
  { key: 'requests', header: 'Requests', render: (day) => count(day.requests) },
  { key: 'promptTokens', header: 'Prompt tokens', render: (day) => count(day.promptTokens) },
  {
    key: 'completionTokens',
    header: 'Completion tokens',
    render: (day) => count(day.completionTokens),
  },
];

/** What the chart shows, in words: it is an image to a screen reader. */
function describe(days: UsageDay[]): string {
  const total = days.reduce((sum, day) => sum + day.totalTokens, 0);
  if (total === 0) return `No tokens used in the last ${DAYS} days.`;
  const busiest = days.reduce((most, day) => (day.totalTokens > most.totalTokens ? day : most));
  return (
    `Tokens per day over the last ${DAYS} days: ${count(total)} in all, the most on ` +
    `${busiest.day} (${count(busiest.totalTokens)}). The table below lists each day with use.`
  );
}

export function UsagePage() {
  const totals = useLoad(chat.usage, []);
  const daily = useLoad(() => chat.usageDaily(DAYS), []);
  const chart = useMemo(() => {
    const days = daily.data ?? [];
    return {
      times: days.map((day) => Date.parse(`${day.day}T00:00:00Z`) / 1000),
      lines: [
        { label: 'Prompt tokens', values: days.map((day) => day.promptTokens) },
        { label: 'Completion tokens', values: days.map((day) => day.completionTokens) },
      ],
    };
  }, [daily.data]);
  return (
    <main id="main" class="page" aria-busy={totals.loading || daily.loading}>
      <h1>Your usage</h1>
      <ErrorNotice error={totals.error} />
      {totals.data && <DetailsView details={totals.data} label="Usage totals" />}
      <section aria-labelledby="usage-per-day">
        <h2 id="usage-per-day">Tokens per day, last {DAYS} days</h2>
        <ErrorNotice error={daily.error} />
        {daily.data && (
          <LineChart
            label={describe(daily.data)}
            times={chart.times}
            lines={chart.lines}
            format={count}
          />
        )}
        <DataTable
          caption={`Usage per day, last ${DAYS} days`}
          columns={COLUMNS}
          rows={daily.data?.filter((day) => day.requests > 0 || day.totalTokens > 0).reverse()}
          rowKey={(day) => day.day}
          loading={daily.loading}
          empty={`No replies in the last ${DAYS} days.`}
        />
      </section>
    </main>
  );
}
