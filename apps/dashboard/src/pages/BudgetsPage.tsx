import { DataTable, Pager, ProblemNotice, SelectField, useLoad } from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { BudgetBar } from '../components/BudgetBar.js';

type Level = Schemas['BudgetResponse']['level'];
const PAGE_SIZE = 50;
const LEVEL_TEXT: Record<Level, string> = {
  token: 'Token',
  member: 'Member',
  team: 'Team',
  gateway: 'Gateway',
};

/** Every budget at a glance, the closest to its cap first. */
export function BudgetsPage() {
  const [level, setLevel] = useState<'' | Level>('');
  const [page, setPage] = useState(1);
  const budgets = useLoad(
    () =>
      call(
        api.GET('/api/budgets', {
          params: { query: { page, pageSize: PAGE_SIZE, ...(level ? { level } : {}) } },
        }),
      ),
    [level, page],
  );
  return (
    <section aria-labelledby="budgets-title">
      <h1 id="budgets-title">Budgets</h1>
      <p class="muted">
        Every budget with what was spent against it this period, closest to its cap first. Set them
        on the Teams page (team and member budgets) or through the API.
      </p>
      <div class="toolbar">
        <SelectField
          label="Level"
          value={level}
          onChange={(value) => {
            setPage(1);
            setLevel(value as '' | Level);
          }}
          options={[
            { value: '', label: 'Every level' },
            ...Object.entries(LEVEL_TEXT).map(([value, label]) => ({ value, label })),
          ]}
        />
      </div>
      <ProblemNotice error={budgets.error} explain={explain} />
      <DataTable
        caption={`Budgets (${budgets.data?.total ?? 0})`}
        rows={budgets.data?.items}
        rowKey={(budget) => budget.id}
        loading={budgets.loading}
        empty="No budgets set."
        columns={[
          {
            key: 'what',
            header: 'Covers',
            render: (budget) => (
              <>
                <strong>{budget.label}</strong>
                <div class="muted">
                  {LEVEL_TEXT[budget.level]} · <code>{budget.subject}</code>
                </div>
              </>
            ),
          },
          {
            key: 'bar',
            header: 'Spent this period',
            render: (budget) => <BudgetBar budget={budget} />,
          },
        ]}
      />
      <Pager
        label="budgets"
        one="budget"
        page={page}
        pageSize={PAGE_SIZE}
        total={budgets.data?.total ?? 0}
        onPage={setPage}
      />
    </section>
  );
}
