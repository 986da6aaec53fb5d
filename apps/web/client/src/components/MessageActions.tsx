import { useState } from 'preact/hooks';
import { type ShownMessage } from './MessageView.js';

/** What can be done with one message: copy it; a question can be edited and sent again,
 * the last reply regenerated. Only offered for messages the server has saved. */
export function MessageActions(props: {
  message: ShownMessage;
  canChange: boolean;
  onEdit?: () => void;
  onRegenerate?: () => void;
}) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const { message } = props;
  if (message.pending || message.content === '') return null;
  const copy = () =>
    navigator.clipboard.writeText(message.content).then(
      () => setCopied('yes'),
      () => setCopied('failed'),
    );
  const mine = message.role === 'user';
  return (
    <div class={`message-actions ${mine ? 'message-actions-user' : ''}`}>
      <button type="button" class="link-button" onClick={() => void copy()}>
        {copied === 'yes' ? 'Copied' : copied === 'failed' ? 'Copy failed' : 'Copy'}
      </button>
      {props.canChange && props.onEdit && (
        <button type="button" class="link-button" onClick={props.onEdit}>
          Edit
        </button>
      )}
      {props.canChange && props.onRegenerate && (
        <button type="button" class="link-button" onClick={props.onRegenerate}>
          Regenerate
        </button>
      )}
    </div>
  );
}

/** A question being edited: sending it replaces it and everything after it. */
export function EditMessage(props: {
  initial: string;
  onSend: (content: string) => void;
  onCancel: () => void;
}) {
  const [content, setContent] = useState(props.initial);
  return (
    <form
      class="message message-user edit-message"
      onSubmit={(event) => {
        event.preventDefault();
        if (content.trim() !== '') props.onSend(content.trim());
      }}
    >
      <label>
        Edit your message
        <textarea
          rows={3}
          value={content}
          onInput={(event) => setContent(event.currentTarget.value)}
          onKeyDown={(event) => event.key === 'Escape' && props.onCancel()}
        />
      </label>
      <div class="composer-actions">
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="submit" disabled={content.trim() === ''}>
          Send again
        </button>
      </div>
    </form>
  );
}
