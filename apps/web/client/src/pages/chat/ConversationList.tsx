import { useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type Conversation } from '../../api/types.js';
import { ErrorNotice } from '../../components/ErrorNotice.js';
import { Link, navigate } from '@switchyard/ui';

/** The conversations in the sidebar, each renamed or deleted in place. */
export function ConversationList(props: {
  conversations: Conversation[];
  activeId: string | null;
  onChanged: () => void;
}) {
  const [renaming, setRenaming] = useState<string | null>(null);
  const [title, setTitle] = useState('');
  const [error, setError] = useState<unknown>(null);

  const rename = async (event: Event, conversation: Conversation) => {
    event.preventDefault();
    try {
      await chat.renameConversation(conversation.id, title.trim());
      setRenaming(null);
      setError(null);
      props.onChanged();
    } catch (failure) {
      setError(failure);
    }
  };

  const remove = async (conversation: Conversation) => {
    if (!confirm(`Delete the conversation “${conversation.title}”?`)) return;
    try {
      await chat.deleteConversation(conversation.id);
      setError(null);
      if (String(conversation.id) === props.activeId) navigate('/');
      props.onChanged();
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <>
      <ErrorNotice error={error} />
      {props.conversations.length === 0 && <p class="empty">No conversations yet.</p>}
      <ul class="conversation-list">
        {props.conversations.map((conversation) => {
          const id = String(conversation.id);
          return (
            <li key={id} class={id === props.activeId ? 'active' : undefined}>
              {renaming === id ? (
                <form class="rename" onSubmit={(event) => void rename(event, conversation)}>
                  <label class="visually-hidden" for={`title-${id}`}>
                    New title
                  </label>
                  <input
                    id={`title-${id}`}
                    required
                    value={title}
                    onInput={(event) => setTitle(event.currentTarget.value)}
                    onKeyDown={(event) => event.key === 'Escape' && setRenaming(null)}
                  />
                  <button type="submit">Save</button>
                  <button type="button" class="secondary" onClick={() => setRenaming(null)}>
                    Cancel
                  </button>
                </form>
              ) : (
                <>
                  <Link
                    href={`/c/${encodeURIComponent(id)}`}
                    current={id === props.activeId}
                    class="conversation-link"
                  >
                    {conversation.title}
                  </Link>
                  <span class="row-actions">
                    <button
                      type="button"
                      class="link-button"
                      aria-label={`Rename “${conversation.title}”`}
                      onClick={() => {
                        setTitle(conversation.title);
                        setRenaming(id);
                      }}
                    >
                      Rename
                    </button>
                    <button
                      type="button"
                      class="link-button danger"
                      aria-label={`Delete “${conversation.title}”`}
                      onClick={() => void remove(conversation)}
                    >
                      Delete
                    </button>
                  </span>
                </>
              )}
            </li>
          );
        })}
      </ul>
    </>
  );
}
