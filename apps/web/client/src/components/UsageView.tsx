import { DataTable, LineChart, type Column } from '@switchyard/ui';
import { useId, useMemo } from 'preact/hooks';
import { type ModelUsage, type UsageDay } from '../api/types.js';

// The pieces the usage page and the admin overview share: the period, the charts per day
// and the table per model.

/** The periods one can pick, in days (today included). */
export const PERIODS = [7, 30, 90] as const;
export type Period = (typeof PERIODS)[number];

export const count = (value: number): string => value.toLocaleString('en-US');

export function PeriodPicker(props: { value: Period; onChange: (days: Period) => void }) {
  const name = useId();
  return (
    <fieldset class="period-picker">
      <legend>Period</legend>
      {PERIODS.map((days) => (
        <label key={days} class="check">
          <input
            type="radio"
            name={name}
            value={days}
            checked={props.value === days}
            onChange={() => props.onChange(days)}
          />
          Last {days} days
        </label>
      ))}
    </fieldset>
  );
}

/** What a chart shows, in words: it is an image to a screen reader. */
function describe(what: string, days: UsageDay[], value: (day: UsageDay) => number): string {
  const total = days.reduce((sum, day) => sum + value(day), 0);
  if (total === 0) return `No ${what} in the last ${days.length} days.`;
  const busiest = days.reduce((most, day) => (value(day) > value(most) ? day : most));
  return (
    `${what} per day over the last ${days.length} days: ${count(total)} in all, the most on ` +
    `${busiest.day} (${count(value(busiest))}).`
  );
}

/** A day of usage; the admin overview adds how many users it came from. */
type ChartDay = UsageDay & { users?: number };

/** Tokens and requests per day, one chart each; users too when the days count them. */
export function DailyCharts(props: { days: ChartDay[] }) {
  const tokensId = useId();
  const requestsId = useId();
  const { days } = props;
  // Memoised: the chart is redrawn whenever its times or lines change identity.
  const chart = useMemo(
    () => ({
      times: days.map((day) => Date.parse(`${day.day}T00:00:00Z`) / 1000),
      tokens: [
        { label: 'Prompt tokens', values: days.map((day) => day.promptTokens) },
        { label: 'Completion tokens', values: days.map((day) => day.completionTokens) },
      ],
      requests: [
        { label: 'Requests', values: days.map((day) => day.requests) },
        ...(days.some((day) => day.users !== undefined)
          ? [{ label: 'Users', values: days.map((day) => day.users ?? 0) }]
          : []),
      ],
    }),
    [days],
  );
  return (
    <div class="usage-charts">
      <section aria-labelledby={tokensId}>
        <h3 id={tokensId}>Tokens per day</h3>
        <LineChart
          label={describe('Tokens', days, (day) => day.totalTokens)}
          times={chart.times}
          lines={chart.tokens}
          format={count}
        />
      </section>
      <section aria-labelledby={requestsId}>
        <h3 id={requestsId}>Requests per day</h3>
        <LineChart
          label={describe('Requests', days, (day) => day.requests)}
          times={chart.times}
          lines={chart.requests}
          format={count}
        />
      </section>
    </div>
  );
}

const MODEL_COLUMNS: Column<ModelUsage>[] = [
  { key: 'model', header: 'Model', render: (row) => row.model },
  { key: 'requests', header: 'Requests', render: (row) => count(row.requests) },
  { key: 'promptTokens', header: 'Prompt tokens', render: (row) => count(row.promptTokens) },
  {
    key: 'completionTokens',
    header: 'Completion tokens',
    render: (row) => count(row.completionTokens),
  },
  { key: 'totalTokens', header: 'Total tokens', render: (row) => count(row.totalTokens) },
];

export function ModelUsageTable(props: {
  caption: string;
  models: ModelUsage[] | undefined;
  loading: boolean;
  days: Period;
}) {
  return (
    <DataTable
      caption={props.caption}
      columns={MODEL_COLUMNS}
      rows={props.models}
      rowKey={(row) => row.model}
      loading={props.loading}
      empty={`No replies in the last ${props.days} days.`}
    />
  );
}
