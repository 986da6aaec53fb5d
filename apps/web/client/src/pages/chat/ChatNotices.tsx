import { nearLimit, type ContextUse } from '../../components/context-use.js';

/** Said once the conversation nears or passes what the model can read at once. */
export function ContextNotice(props: { context: ContextUse | null; model: string }) {
  const { context, model } = props;
  if (!nearLimit(context)) return null;
  return (
    <div class="notice" role="status">
      <p class="notice-title">
        {context.tokens >= context.limit
          ? "This conversation no longer fits the model's context window"
          : "This conversation is nearing the model's context window"}
      </p>
      <p>
        It takes about {context.tokens.toLocaleString()} of the {context.limit.toLocaleString()}{' '}
        tokens {model} can read ({Math.round((context.tokens / context.limit) * 100)} %)
        {context.toolDefinitionTokens > 0 &&
          `, ${context.toolDefinitionTokens.toLocaleString()} of them tool definitions`}
        . Past the window the model no longer sees the start: start a new chat
        {context.toolDefinitionTokens > 0 && ', or turn off the tools you do not need'}.
      </p>
    </div>
  );
}

export function NoModelNotice() {
  return (
    <div class="notice" role="status">
      <p class="notice-title">No model is available to you yet.</p>
      <p>
        Ask an administrator to open a model to all users or to give you the permission for one.
      </p>
    </div>
  );
}
