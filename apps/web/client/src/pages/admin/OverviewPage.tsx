import { DataTable, useLoad, type Column } from '@switchyard/ui';
import { useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type AdminUsageDay } from '../../api/types.js';
import { DetailsView } from '../../components/DetailsView.js';
import { ErrorNotice } from '../../components/ErrorNotice.js';
import { CreditOverview } from './CreditOverview.js';
import {
  DailyCharts,
  ModelUsageTable,
  PeriodPicker,
  count,
  type Period,
} from '../../components/UsageView.js';

const COLUMNS: Column<AdminUsageDay>[] = [
  { key: 'day', header: 'Day (UTC)', render: (day) => day.day },
  { key: 'users', header: 'Users', render: (day) => count(day.users) },
  { key: 'requests', header: 'Requests', render: (day) => count(day.requests) },
  { key: 'totalTokens', header: 'Tokens', render: (day) => count(day.totalTokens) },
];

/** Every user's usage over a period: the administrators' first page. */
export function OverviewPage() {
  const [days, setDays] = useState<Period>(7);
  const overview = useLoad(() => chat.adminUsage(days), [days]);
  const data = overview.data;
  const sum = (pick: (day: AdminUsageDay) => number) =>
    data?.items.reduce((total, day) => total + pick(day), 0) ?? 0;
  return (
    <section aria-labelledby="overview-title" aria-busy={overview.loading}>
      <h1 id="overview-title">Overview</h1>
      <PeriodPicker value={days} onChange={setDays} />
      <ErrorNotice error={overview.error} />
      {data && (
        <DetailsView
          label={`Totals, last ${days} days`}
          details={{
            users: data.users,
            requests: sum((day) => day.requests),
            tokens: sum((day) => day.totalTokens),
          }}
        />
      )}
      <section aria-labelledby="overview-per-day">
        <h2 id="overview-per-day">Per day, last {days} days</h2>
        {data && <DailyCharts days={data.items} />}
        <DataTable
          caption={`Everyone's usage per day, last ${days} days`}
          columns={COLUMNS}
          rows={data?.items.filter((day) => day.users > 0).reverse()}
          rowKey={(day) => day.day}
          loading={overview.loading}
          empty={`No replies in the last ${days} days.`}
        />
      </section>
      <section aria-labelledby="overview-models">
        <h2 id="overview-models">Top models, last {days} days</h2>
        <ModelUsageTable
          caption={`Top models, last ${days} days`}
          models={data?.models}
          loading={overview.loading}
          days={days}
        />
      </section>
      <CreditOverview days={days} />
    </section>
  );
}
