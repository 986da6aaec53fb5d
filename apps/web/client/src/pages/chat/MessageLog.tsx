import { ErrorNotice } from '../../components/ErrorNotice.js';
import { MessageRow, type RowActions } from './MessageRow.js';
import { type useMessagePaging } from './useMessagePaging.js';

/** The conversation's messages, announced as they come, with the way to earlier ones. */
export function MessageLog(props: {
  paging: ReturnType<typeof useMessagePaging>;
  streaming: boolean;
  /** Messages can be edited and asked again only in a saved conversation. */
  saved: boolean;
  /** The index of the question being edited. */
  editing: number | null;
  actions: RowActions;
}) {
  const { paging, streaming } = props;
  const { messages, loadingOlder } = paging;
  const lastReply = messages.findLastIndex((message) => message.role === 'assistant');
  return (
    <div
      class="messages"
      ref={paging.log}
      role="log"
      aria-label="Messages"
      aria-live="polite"
      aria-busy={streaming || paging.loading}
      tabIndex={0}
      onScroll={paging.onScroll}
    >
      {paging.older > 0 && (
        <button
          type="button"
          class="secondary load-older"
          disabled={loadingOlder}
          onClick={() => void paging.loadOlder()}
        >
          {loadingOlder ? 'Loading earlier messages…' : 'Load earlier messages'}
        </button>
      )}
      <ErrorNotice error={paging.error} />
      {messages.length === 0 && !paging.loading && !paging.error && (
        <p class="empty">Start the conversation by writing a message below.</p>
      )}
      {messages.map((message, index) => (
        <MessageRow
          key={message.key}
          message={message}
          index={index}
          editing={props.editing === index}
          canChange={!streaming && message.id !== undefined && props.saved}
          lastReply={index === lastReply}
          actions={props.actions}
        />
      ))}
    </div>
  );
}
