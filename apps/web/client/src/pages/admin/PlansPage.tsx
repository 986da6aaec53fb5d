import {
  DataTable,
  FormActions,
  SelectField,
  Switch,
  TextField,
  fieldErrors,
  useAction,
  useLoad,
  useToast,
  type Column,
} from '@switchyard/ui';
import { useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type AdminModel, type Plan } from '../../api/types.js';
import { ErrorNotice } from '../../components/ErrorNotice.js';
import { count } from '../../components/UsageView.js';

// Credit plans (docs/credits.md, "Plans"): credits each period and the models included.
// Users are put on a plan from Admin → Users, or by a plan code from Admin → Codes.

const PERIODS = [
  { value: 'month', label: 'Each UTC calendar month' },
  { value: 'day', label: 'Each UTC day' },
];

export function PlansPage() {
  const plans = useLoad(chat.listPlans, []);
  const models = useLoad(chat.listAdminModels, []);
  const [editing, setEditing] = useState<Plan | 'new' | null>(null);
  const notify = useToast();
  const { act, error } = useAction(plans.reload);

  const setDisabled = (plan: Plan, disabled: boolean) =>
    act(
      () => chat.updatePlan(plan.id, { disabled }),
      `Plan ${plan.name} ${disabled ? 'disabled' : 'enabled'}.`,
    );

  const columns: Column<Plan>[] = [
    { key: 'name', header: 'Plan', render: (plan) => plan.name },
    {
      key: 'credits',
      header: 'Credits',
      render: (plan) => `${count(plan.credits)} a ${plan.period}`,
    },
    {
      key: 'models',
      header: 'Models included',
      render: (plan) => (plan.models.length === 0 ? 'none' : plan.models.join(', ')),
    },
    { key: 'subscribers', header: 'Users', render: (plan) => count(plan.subscribers) },
    {
      key: 'disabled',
      header: 'Disabled',
      render: (plan) => (
        <Switch
          checked={plan.disabled}
          label={`Disable ${plan.name}`}
          text={plan.disabled ? 'Disabled' : 'Active'}
          onChange={(disabled) => void setDisabled(plan, disabled)}
        />
      ),
    },
    {
      key: 'actions',
      header: 'Actions',
      hiddenHeader: true,
      render: (plan) => (
        <button type="button" class="link-button" onClick={() => setEditing(plan)}>
          Edit<span class="visually-hidden"> {plan.name}</span>
        </button>
      ),
    },
  ];

  return (
    <section aria-labelledby="plans-title">
      <div class="page-header">
        <h1 id="plans-title">Plans</h1>
        <button type="button" onClick={() => setEditing('new')}>
          New plan
        </button>
      </div>
      <p class="lead">
        A plan adds its credits to each of its users’ balances once a UTC day or month, and lets
        them use the models it includes even when those are not open to everyone. Put a user on a
        plan from Users, or give plan codes from Codes. A disabled plan takes no new users, tops
        nobody up and includes no models.
      </p>
      <ErrorNotice error={error ?? plans.error} />
      {editing && (
        <PlanForm
          key={editing === 'new' ? 'new' : editing.id}
          plan={editing === 'new' ? null : editing}
          models={models.data?.items ?? []}
          onCancel={() => setEditing(null)}
          onSaved={async (saved) => {
            setEditing(null);
            await plans.reload();
            notify(`Plan ${saved.name} saved.`);
          }}
        />
      )}
      <DataTable
        caption={`Plans (${plans.data?.total ?? 0})`}
        columns={columns}
        rows={plans.data?.items}
        rowKey={(plan) => plan.id}
        loading={plans.loading}
        empty="No plans yet."
      />
    </section>
  );
}

function PlanForm(props: {
  plan: Plan | null;
  models: AdminModel[];
  onCancel: () => void;
  onSaved: (plan: Plan) => Promise<void>;
}) {
  const { plan } = props;
  const [name, setName] = useState(plan?.name ?? '');
  const [credits, setCredits] = useState(String(plan?.credits ?? 1000));
  const [period, setPeriod] = useState<Plan['period']>(plan?.period ?? 'month');
  const [included, setIncluded] = useState(() => new Set(plan?.models ?? []));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = fieldErrors(error);

  const toggle = (model: string, on: boolean) => {
    const next = new Set(included);
    if (on) next.add(model);
    else next.delete(model);
    setIncluded(next);
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const changes = { name: name.trim(), credits: Number(credits), models: [...included] };
    try {
      await props.onSaved(
        plan
          ? await chat.updatePlan(plan.id, changes)
          : await chat.createPlan({ ...changes, period }),
      );
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const title = plan ? `Edit plan ${plan.name}` : 'New plan';
  return (
    <form class="card editor" onSubmit={(event) => void submit(event)} aria-label={title}>
      <h2>{title}</h2>
      <ErrorNotice error={error} />
      <TextField label="Name" required value={name} onInput={setName} error={fields['name']} />
      <TextField
        label="Credits each period"
        type="number"
        min={1}
        required
        value={credits}
        onInput={setCredits}
        error={fields['credits']}
        hint={plan ? 'A change applies from the next top-up.' : undefined}
      />
      {plan ? (
        <p>
          Period: {PERIODS.find((option) => option.value === plan.period)?.label}. A plan’s period
          cannot change: make a new plan instead.
        </p>
      ) : (
        <SelectField
          label="Period"
          value={period}
          options={PERIODS}
          onChange={(value) => setPeriod(value as Plan['period'])}
          error={fields['period']}
        />
      )}
      <fieldset>
        <legend>Models included</legend>
        {props.models.length === 0 && <p>No models yet.</p>}
        {props.models.map((model) => (
          <label key={String(model.id)} class="check">
            <input
              type="checkbox"
              checked={included.has(model.name)}
              onChange={(event) => toggle(model.name, event.currentTarget.checked)}
            />
            <code>{model.name}</code>
            {model.open && <span class="cell-note"> (open to all anyway)</span>}
          </label>
        ))}
        {fields['models'] && <p class="field-error">{fields['models']}</p>}
      </fieldset>
      <FormActions submit="Save plan" busy={busy} onCancel={props.onCancel} />
    </form>
  );
}
