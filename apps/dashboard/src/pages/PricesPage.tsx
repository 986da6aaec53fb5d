import { PriceTable } from '@switchyard/domain';
import {
  DataTable,
  ProblemNotice,
  RowButton,
  SelectField,
  useLoad,
  useToast,
  type Column,
} from '@switchyard/ui';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, call, explain, type Schemas } from '../api/client.js';
import { count, dollarsToMicros, download, microsToDollars } from '../format.js';
import { useCanEdit } from '../me.js';

type Price = Schemas['PriceDto'];
interface Row {
  model: string;
  input: string;
  output: string;
  saved: boolean;
}

/** Every price, page by page (the API pages lists; a price table is small). */
async function allPrices(): Promise<Schemas['PriceResponse'][]> {
  const prices: Schemas['PriceResponse'][] = [];
  for (let page = 1; ; page += 1) {
    const answer = await call(
      api.GET('/api/prices', { params: { query: { page, pageSize: 100 } } }),
    );
    prices.push(...answer.items);
    if (answer.items.length < 100 || prices.length >= answer.total) return prices;
  }
}

export function PricesPage() {
  const canEdit = useCanEdit();
  const notify = useToast();
  const prices = useLoad(allPrices, []);
  const seen = useLoad(
    () =>
      call(
        api.GET('/api/usage/summary', {
          params: {
            query: { groupBy: 'model', from: new Date(Date.now() - 30 * 86_400_000).toISOString() },
          },
        }),
      ),
    [],
  );
  const [rows, setRows] = useState<Row[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [mode, setMode] = useState<'merge' | 'replace'>('merge');

  useEffect(() => {
    setRows(
      (prices.data ?? []).map((price) => ({
        model: price.model,
        input: microsToDollars(price.inputPrice),
        output: microsToDollars(price.outputPrice),
        saved: true,
      })),
    );
  }, [prices.data]);

  const unpriced = useMemo(() => {
    // The price table as metering reads it, so every entry kind (`*-all` too) counts.
    const table = new PriceTable(
      rows.map((row) => ({ model: row.model, inputPrice: 0, outputPrice: 0 })),
    );
    return (seen.data?.items ?? []).filter(
      (item) => item.key !== null && table.find(item.key) === undefined,
    );
  }, [rows, seen.data]);

  const put = async (items: Price[], how: 'merge' | 'replace', done: string) => {
    setError(null);
    try {
      await call(api.PUT('/api/prices', { body: { items, mode: how } }));
      notify(done);
      await prices.reload();
    } catch (failure) {
      setError(failure);
    }
  };

  const save = () => {
    const items = rows
      .filter((row) => row.model.trim() !== '')
      .map((row) => ({
        model: row.model.trim(),
        inputPrice: dollarsToMicros(row.input) ?? -1,
        outputPrice: dollarsToMicros(row.output) ?? -1,
      }));
    void put(items, 'merge', 'Prices saved.');
  };

  const remove = async (model: string) => {
    setError(null);
    try {
      await call(api.DELETE('/api/prices/{model}', { params: { path: { model } } }));
      notify(`Price of ${model} removed.`);
      await prices.reload();
    } catch (failure) {
      setError(failure);
    }
  };

  const importFile = async (file: File) => {
    let items: Price[];
    try {
      const parsed = JSON.parse(await file.text()) as { items?: Price[] } | Price[];
      items = Array.isArray(parsed) ? parsed : (parsed.items ?? []);
    } catch (failure) {
      setError({
        code: 'invalid_json',
        message: `${file.name} is not JSON: ${(failure as Error).message}`,
      });
      return;
    }
    await put(items, mode, `${items.length} prices imported (${mode}).`);
  };

  const update = (index: number, change: Partial<Row>) =>
    setRows(rows.map((row, i) => (i === index ? { ...row, ...change } : row)));

  const priceColumn = (
    field: 'input' | 'output',
    name: string,
  ): Column<{ row: Row; index: number }> => ({
    key: field,
    header: `${name} ($ / 1M tokens)`,
    render: ({ row, index }) =>
      canEdit ? (
        <input
          type="number"
          min={0}
          step="any"
          aria-label={`${name} price of ${row.model || 'new model'}`}
          value={row[field]}
          onInput={(e) => update(index, { [field]: e.currentTarget.value })}
        />
      ) : (
        row[field]
      ),
  });

  const columns: Column<{ row: Row; index: number }>[] = [
    {
      key: 'model',
      header: 'Model',
      render: ({ row, index }) =>
        canEdit && !row.saved ? (
          <input
            aria-label="Model"
            value={row.model}
            onInput={(e) => update(index, { model: e.currentTarget.value })}
          />
        ) : (
          <code>{row.model}</code>
        ),
    },
    priceColumn('input', 'Input'),
    priceColumn('output', 'Output'),
    ...(canEdit
      ? [
          {
            key: 'actions',
            header: 'Actions',
            hiddenHeader: true,
            render: ({ row, index }: { row: Row; index: number }) => (
              <RowButton
                action="Remove"
                row={row.model || 'new model'}
                onClick={() =>
                  row.saved ? void remove(row.model) : setRows(rows.filter((_, i) => i !== index))
                }
                danger
              />
            ),
          },
        ]
      : []),
  ];

  return (
    <section aria-labelledby="prices-title">
      <div class="page-header">
        <h1 id="prices-title">Prices</h1>
        <button
          type="button"
          class="secondary"
          onClick={() =>
            download(
              'prices.json',
              'application/json',
              `${JSON.stringify({ items: (prices.data ?? []).map(({ model, inputPrice, outputPrice }) => ({ model, inputPrice, outputPrice })) }, null, 2)}\n`,
            )
          }
        >
          Export JSON
        </button>
      </div>
      <p class="help">
        US dollars per million tokens. A model ending in <code>*</code> prices every model with that
        prefix.
      </p>
      <ProblemNotice error={error ?? prices.error} explain={explain} />
      {unpriced.length > 0 && (
        <div class="notice notice-error" role="status">
          <p class="notice-title">
            Models used in the last 30 days without a price (they cost nothing):
          </p>
          <ul>
            {unpriced.map((item) => (
              <li key={item.key}>
                <code>{item.key}</code> ({count(item.requests)} requests){' '}
                {canEdit && (
                  <button
                    type="button"
                    class="link-button"
                    onClick={() =>
                      setRows([
                        ...rows,
                        { model: item.key ?? '', input: '', output: '', saved: false },
                      ])
                    }
                  >
                    Add a price<span class="visually-hidden"> for {item.key}</span>
                  </button>
                )}
              </li>
            ))}
          </ul>
        </div>
      )}
      <DataTable
        caption="Model prices"
        columns={columns}
        rows={
          prices.loading && rows.length === 0
            ? undefined
            : rows.map((row, index) => ({ row, index }))
        }
        rowKey={({ index }) => index}
        loading={prices.loading}
        empty="No prices yet."
      />
      {canEdit && (
        <>
          <div class="form-actions">
            <button
              type="button"
              class="secondary"
              onClick={() => setRows([...rows, { model: '', input: '', output: '', saved: false }])}
            >
              Add model
            </button>
            <button type="button" onClick={save}>
              Save prices
            </button>
          </div>
          <div class="card toolbar">
            <SelectField
              label="Import mode"
              value={mode}
              onChange={(value) => setMode(value as 'merge' | 'replace')}
              options={[
                { value: 'merge', label: 'Merge (keep prices not in the file)' },
                { value: 'replace', label: 'Replace (the table becomes the file)' },
              ]}
            />
            <label>
              Import JSON
              <input
                type="file"
                accept="application/json,.json"
                onChange={(event) => {
                  const file = event.currentTarget.files?.[0];
                  if (file) void importFile(file);
                  event.currentTarget.value = '';
                }}
              />
            </label>
          </div>
        </>
      )}
    </section>
  );
}
