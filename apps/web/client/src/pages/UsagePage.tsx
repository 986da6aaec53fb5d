import { DataTable, useLoad, type Column } from '@switchyard/ui';
import { useState } from 'preact/hooks';
import * as chat from '../api/chat-api.js';
import { type UsageDay } from '../api/types.js';
import { DetailsView } from '../components/DetailsView.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import {
  DailyCharts,
  ModelUsageTable,
  PeriodPicker,
  count,
  type Period,
} from '../components/UsageView.js';

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

export function UsagePage() {
  const [days, setDays] = useState<Period>(30);
  const totals = useLoad(chat.usage, []);
  const period = useLoad(() => chat.usageDaily(days), [days]);
  return (
    <main id="main" class="page" aria-busy={totals.loading || period.loading}>
      <h1>Your usage</h1>
      <ErrorNotice error={totals.error} />
      {totals.data && <DetailsView details={totals.data} label="Usage totals" />}
      <PeriodPicker value={days} onChange={setDays} />
      <ErrorNotice error={period.error} />
      <section aria-labelledby="usage-per-model">
        <h2 id="usage-per-model">Per model, last {days} days</h2>
        <ModelUsageTable
          caption={`Usage per model, last ${days} days`}
          models={period.data?.models}
          loading={period.loading}
          days={days}
        />
      </section>
      <section aria-labelledby="usage-per-day">
        <h2 id="usage-per-day">Per day, last {days} days</h2>
        {period.data && <DailyCharts days={period.data.items} />}
        <DataTable
          caption={`Usage per day, last ${days} days`}
          columns={COLUMNS}
          rows={period.data?.items
            .filter((day) => day.requests > 0 || day.totalTokens > 0)
            .reverse()}
          rowKey={(day) => day.day}
          loading={period.loading}
          empty={`No replies in the last ${days} days.`}
        />
      </section>
    </main>
  );
}
