import { type McpServerChoice } from '../api/types.js';

/** Which MCP servers the conversation may use; shown only when there are any. */
export function ToolPicker(props: {
  servers: McpServerChoice[];
  value: number[];
  disabled: boolean;
  onChange(ids: number[]): void;
}) {
  if (props.servers.length === 0) return null;
  const chosen = new Set(props.value.map(String));
  return (
    <fieldset class="tool-picker" disabled={props.disabled}>
      <legend>Tools</legend>
      {props.servers.map((server) => (
        <label key={String(server.id)} class="check">
          <input
            type="checkbox"
            checked={chosen.has(String(server.id))}
            onChange={(event) =>
              props.onChange(
                event.currentTarget.checked
                  ? [...props.value, server.id]
                  : props.value.filter((id) => String(id) !== String(server.id)),
              )
            }
          />
          {server.name}
        </label>
      ))}
    </fieldset>
  );
}
