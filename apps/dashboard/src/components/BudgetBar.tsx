import { type Schemas } from '../api/client.js';
import { money, when } from '../format.js';

type Budget = Schemas['BudgetResponse'];

const PERIOD_TEXT: Record<Budget['period'], string> = {
  none: 'in total',
  day: 'per day',
  week: 'per week',
  month: 'per month',
};

/** A budget as a bar: spent of the amount this period, and when it resets. */
export function BudgetBar(props: { budget: Budget; label?: string }) {
  const { budget } = props;
  const label = props.label ?? budget.label;
  const state = budget.exceeded
    ? { text: 'Spent', tone: 'bad' }
    : budget.softReached
      ? { text: `Past ${budget.softPercent}%`, tone: 'warn' }
      : null;
  return (
    <div class="budget">
      <progress
        class="bar"
        max={Math.max(budget.amount, 1)}
        value={Math.min(budget.spent, budget.amount)}
        aria-label={`Budget of ${label}: ${budget.percent}% spent`}
      />
      <div class="muted">
        {money(budget.spent)} of {money(budget.amount)} {PERIOD_TEXT[budget.period]} (
        {budget.percent}%) {state && <span class={`badge badge-${state.tone}`}>{state.text}</span>}
      </div>
      <div class="muted">
        {budget.resetsAt ? `Resets ${when(budget.resetsAt)}` : 'Never resets'}
      </div>
    </div>
  );
}
