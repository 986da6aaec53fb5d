import { memo } from 'preact/compat';
import { EditMessage, MessageActions } from '../../components/MessageActions.js';
import { MessageView, type ShownMessage } from '../../components/MessageView.js';

/** What a message's buttons do, one object for the page's whole life (see ChatPage). */
export interface RowActions {
  edit: (index: number) => void;
  cancelEdit: () => void;
  resend: (index: number, content: string) => void;
  regenerate: (index: number) => void;
}

/** One message and what can be done with it; memoised, so a streamed chunk redraws only
 * the reply it belongs to. */
export const MessageRow = memo(function MessageRow(props: {
  message: ShownMessage;
  index: number;
  editing: boolean;
  canChange: boolean;
  lastReply: boolean;
  actions: RowActions;
}) {
  const { message, index, actions } = props;
  if (props.editing) {
    return (
      <EditMessage
        initial={message.content}
        onSend={(content) => actions.resend(index, content)}
        onCancel={actions.cancelEdit}
      />
    );
  }
  return (
    <>
      <MessageView message={message} />
      <MessageActions
        message={message}
        canChange={props.canChange}
        {...(message.role === 'user' ? { onEdit: () => actions.edit(index) } : {})}
        {...(props.lastReply ? { onRegenerate: () => actions.regenerate(index) } : {})}
      />
    </>
  );
});
