import { type Details } from '../api/types.js';

/** `promptTokens` → "Prompt tokens". */
export function labelOf(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase()
    .trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function valueOf(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') return value.toLocaleString();
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((item) => typeof item !== 'object'))
    return value.join(', ');
  return JSON.stringify(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An answer whose exact fields the contract leaves open, shown field by field. */
export function DetailsView(props: { details: Details; label: string }) {
  const entries = Object.entries(props.details);
  if (entries.length === 0) return <p>Nothing to show.</p>;
  return (
    <dl class="details" aria-label={props.label}>
      {entries.map(([name, value]) => (
        <div key={name}>
          <dt>{labelOf(name)}</dt>
          <dd>
            {isRecord(value) ? (
              <DetailsView details={value} label={labelOf(name)} />
            ) : Array.isArray(value) && value.some(isRecord) ? (
              <RecordsTable rows={value.filter(isRecord)} caption={labelOf(name)} />
            ) : (
              valueOf(value)
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}

function RecordsTable(props: { rows: Record<string, unknown>[]; caption: string }) {
  const columns = [...new Set(props.rows.flatMap((row) => Object.keys(row)))];
  return (
    <div class="table-scroll">
      <table>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {labelOf(column)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row, index) => (
            <tr key={index}>
              {columns.map((column) => (
                <td key={column}>{valueOf(row[column])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
