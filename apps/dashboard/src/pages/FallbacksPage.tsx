import {
  DataTable,
  ProblemNotice,
  RowButton,
  TextField,
  fieldErrors,
  useAction,
  useLoad,
} from '@switchyard/ui';
import { useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { useCanEdit } from '../me.js';

// A model's fallback lists (docs/routing.md, "Fallbacks across models"): which models the
// edge tries, in order, when none of the model's channels answered, and the lists for a
// context-window or content-policy refusal.

type Fallback = Schemas['ModelFallbackResponse'];
type ListName = 'fallbacks' | 'contextWindow' | 'contentPolicy';

const LISTS: { name: ListName; label: string; hint: string }[] = [
  {
    name: 'fallbacks',
    label: 'Fallbacks',
    hint: 'Models tried in order when every channel of the model failed or is busy.',
  },
  {
    name: 'contextWindow',
    label: 'On a context-window error',
    hint: 'Tried instead when the upstream says the request is longer than the model takes.',
  },
  {
    name: 'contentPolicy',
    label: 'On a content-policy refusal',
    hint: 'Tried instead when the upstream refuses the request under its content policy.',
  },
];

/** The names in a comma-separated field, in order. */
function namesOf(text: string): string[] {
  return text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

/** Every model's lists (the API pages them; a gateway has a few hundred models at most). */
async function allFallbacks(): Promise<Fallback[]> {
  const items: Fallback[] = [];
  for (let page = 1; ; page += 1) {
    const answer = await call(
      api.GET('/api/model-fallbacks', { params: { query: { page, pageSize: 100 } } }),
    );
    items.push(...answer.items);
    if (answer.items.length < 100 || items.length >= answer.total) return items;
  }
}

export function FallbacksPage() {
  const canEdit = useCanEdit();
  const fallbacks = useLoad(allFallbacks, []);
  const { act, error, setError } = useAction(fallbacks.reload);
  const [model, setModel] = useState('');
  const [lists, setLists] = useState<Record<ListName, string>>({
    fallbacks: '',
    contextWindow: '',
    contentPolicy: '',
  });
  const fields = fieldErrors(error);
  // The API names the entry (`fallbacks[1]`): its list's field shows it.
  const errorOf = (name: string): string | undefined =>
    Object.entries(fields).find(([field]) => field === name || field.startsWith(`${name}[`))?.[1];

  const edit = (row: Fallback) => {
    setError(null);
    setModel(row.model);
    setLists({
      fallbacks: row.fallbacks.join(', '),
      contextWindow: row.contextWindow.join(', '),
      contentPolicy: row.contentPolicy.join(', '),
    });
  };

  const save = (event: Event) => {
    event.preventDefault();
    const name = model.trim();
    void act(
      () =>
        call(
          api.PUT('/api/model-fallbacks/{model}', {
            params: { path: { model: name } },
            body: {
              fallbacks: namesOf(lists.fallbacks),
              contextWindow: namesOf(lists.contextWindow),
              contentPolicy: namesOf(lists.contentPolicy),
            },
          }),
        ),
      `Fallbacks of ${name} saved.`,
    );
  };

  const remove = (name: string) =>
    void act(
      () => call(api.DELETE('/api/model-fallbacks/{model}', { params: { path: { model: name } } })),
      `Fallbacks of ${name} removed.`,
    );

  const listColumn = (name: ListName, header: string) => ({
    key: name,
    header,
    render: (row: Fallback) =>
      row[name].length > 0 ? <code>{row[name].join(' → ')}</code> : <span class="muted">none</span>,
  });

  return (
    <section aria-labelledby="fallbacks-title">
      <h1 id="fallbacks-title">Fallbacks</h1>
      <p class="help">
        When no channel of a model can answer, the gateway tries the models of its list in order;
        the answer&rsquo;s <code>x-switchyard-model</code> header and the usage row say which model
        served. Nothing is retried once a stream has started.
      </p>
      <ProblemNotice error={error ?? fallbacks.error} explain={explain} />
      <DataTable
        caption="Fallback lists"
        rows={fallbacks.data}
        rowKey={(row) => row.model}
        loading={fallbacks.loading}
        empty="No model has fallbacks yet."
        columns={[
          { key: 'model', header: 'Model', render: (row) => <code>{row.model}</code> },
          listColumn('fallbacks', 'Fallbacks'),
          listColumn('contextWindow', 'Context window'),
          listColumn('contentPolicy', 'Content policy'),
          ...(canEdit
            ? [
                {
                  key: 'actions',
                  header: 'Actions',
                  hiddenHeader: true,
                  render: (row: Fallback) => (
                    <>
                      <RowButton action="Edit" row={row.model} onClick={() => edit(row)} />
                      <RowButton
                        action="Remove"
                        row={row.model}
                        onClick={() => remove(row.model)}
                        danger
                      />
                    </>
                  ),
                },
              ]
            : []),
        ]}
      />
      {canEdit && (
        <form class="card" aria-labelledby="fallback-form-title" onSubmit={save}>
          <h2 id="fallback-form-title">Set a model&rsquo;s fallbacks</h2>
          <TextField
            label="Model"
            value={model}
            onInput={setModel}
            required
            error={fields.model}
            hint="The exact model name callers ask for."
          />
          {LISTS.map((list) => (
            <TextField
              key={list.name}
              label={list.label}
              value={lists[list.name]}
              onInput={(value) => setLists({ ...lists, [list.name]: value })}
              error={errorOf(list.name)}
              hint={`${list.hint} Model names, separated by commas.`}
            />
          ))}
          <div class="form-actions">
            <button type="submit">Save fallbacks</button>
          </div>
        </form>
      )}
    </section>
  );
}
