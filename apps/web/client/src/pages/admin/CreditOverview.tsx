import { DataTable, LineChart, useLoad, type Column } from '@switchyard/ui';
import { useMemo } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type CreditDay } from '../../api/types.js';
import { ErrorNotice } from '../../components/ErrorNotice.js';
import { ModelSpendTable } from '../../components/ModelSpendTable.js';
import { count, type Period } from '../../components/UsageView.js';

// The overview's credit figures (docs/credits.md, "Overview"): granted and spent per UTC day
// as a chart, the same numbers in a table (the chart is an image to a screen reader), and
// the spend per model (ModelSpendTable).

const DAY_COLUMNS: Column<CreditDay>[] = [
  { key: 'day', header: 'Day (UTC)', render: (day) => day.day },
  { key: 'granted', header: 'Granted', render: (day) => count(day.granted) },
  { key: 'grant', header: 'Registration', render: (day) => count(day.grant) },
  { key: 'redeem', header: 'Codes', render: (day) => count(day.redeem) },
  { key: 'invite', header: 'Invitations', render: (day) => count(day.invite) },
  { key: 'plan', header: 'Plans', render: (day) => count(day.plan) },
  { key: 'adjust', header: 'Adjustments', render: (day) => count(day.adjust) },
  { key: 'spent', header: 'Spent', render: (day) => count(day.spent) },
];

function describe(days: CreditDay[]): string {
  const granted = days.reduce((sum, day) => sum + day.granted, 0);
  const spent = days.reduce((sum, day) => sum + day.spent, 0);
  if (granted === 0 && spent === 0)
    return `No credits granted or spent in the last ${days.length} days.`;
  return (
    `Credits granted and spent per day over the last ${days.length} days: ` +
    `${count(granted)} granted and ${count(spent)} spent in all.`
  );
}

export function CreditOverview(props: { days: Period }) {
  const { days } = props;
  const overview = useLoad(() => chat.adminCreditOverview(days), [days]);
  const data = overview.data;
  // Memoised: the chart is redrawn whenever its times or lines change identity.
  const chart = useMemo(
    () =>
      data && {
        times: data.items.map((day) => Date.parse(`${day.day}T00:00:00Z`) / 1000),
        lines: [
          { label: 'Granted', values: data.items.map((day) => day.granted) },
          { label: 'Spent', values: data.items.map((day) => day.spent) },
        ],
      },
    [data],
  );
  return (
    <section aria-labelledby="overview-credits" aria-busy={overview.loading}>
      <h2 id="overview-credits">Credits, last {days} days</h2>
      <ErrorNotice error={overview.error} />
      <div class="usage-charts">
        <section aria-labelledby="overview-credits-per-day">
          <h3 id="overview-credits-per-day">Granted and spent per day</h3>
          {data && chart && (
            <LineChart
              label={describe(data.items)}
              times={chart.times}
              lines={chart.lines}
              format={count}
            />
          )}
        </section>
        <section aria-labelledby="overview-credits-models">
          <h3 id="overview-credits-models">Spent per model</h3>
          <ModelSpendTable
            caption={`Credits spent per model, last ${days} days`}
            models={data?.models}
            loading={overview.loading}
            empty={`No credits spent in the last ${days} days.`}
          />
        </section>
      </div>
      <section aria-labelledby="overview-credits-table">
        <h3 id="overview-credits-table">Granted and spent per day, by kind</h3>
        <DataTable
          caption={`Credits granted and spent per day, last ${days} days`}
          columns={DAY_COLUMNS}
          rows={data?.items.filter((day) => day.granted !== 0 || day.spent !== 0).reverse()}
          rowKey={(day) => day.day}
          loading={overview.loading}
          empty={`No credits granted or spent in the last ${days} days.`}
        />
      </section>
    </section>
  );
}
