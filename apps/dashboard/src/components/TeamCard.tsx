import { ProblemNotice, TextField } from '@switchyard/ui';
import { type ComponentChildren } from 'preact';
import { explain, type Schemas } from '../api/client.js';
import { BudgetBar } from './BudgetBar.js';

// A team as the administrators' Teams page and a member's My teams page both show it: a
// card under the team's name, its budgets as bars, and the one-field forms (redeem a code,
// credit a balance, add a member) that act on it. Each page adds what only it may do.

type Budget = Schemas['BudgetResponse'];

/** A team's card: its name as the heading, the last action's problem, then the page's content. */
export function TeamCard(props: {
  headingId: string;
  name: string;
  error: unknown;
  children: ComponentChildren;
}) {
  return (
    <section class="card" aria-labelledby={props.headingId}>
      <h2 id={props.headingId}>{props.name}</h2>
      <ProblemNotice error={props.error} explain={explain} />
      {props.children}
    </section>
  );
}

/** The budgets covering a team or a member, as bars, each with what the page lets one do to it. */
export function BudgetList(props: {
  budgets: Budget[];
  empty: string;
  actions?: (budget: Budget) => ComponentChildren;
}) {
  return (
    <>
      {props.budgets.length === 0 && <p class="muted">{props.empty}</p>}
      <ul class="plain">
        {props.budgets.map((budget) => (
          <li key={budget.id}>
            <strong>{budget.label}</strong> <span class="muted">({budget.level})</span>
            <BudgetBar budget={budget} />
            {props.actions?.(budget)}
          </li>
        ))}
      </ul>
    </>
  );
}

/** A form of one text field and its button, in a toolbar (redeem, credit, add a member). */
export function OneFieldForm(props: {
  name: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  placeholder?: string;
  submit: string;
  onSubmit: () => void;
}) {
  return (
    <form
      class="toolbar"
      aria-label={props.name}
      onSubmit={(event) => {
        event.preventDefault();
        props.onSubmit();
      }}
    >
      <TextField
        label={props.label}
        value={props.value}
        onInput={props.onInput}
        placeholder={props.placeholder}
      />
      <button type="submit">{props.submit}</button>
    </form>
  );
}
