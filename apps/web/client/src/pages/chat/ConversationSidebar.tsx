import { useEffect, useState } from 'preact/hooks';
import { ErrorNotice } from '../../components/ErrorNotice.js';
import { navigate } from '@switchyard/ui';
import { ConversationList } from './ConversationList.js';
import { type useConversations } from './useConversations.js';

/** The conversations beside the chat; on a narrow screen a panel that opening one closes. */
export function ConversationSidebar(props: {
  conversations: ReturnType<typeof useConversations>;
  activeId: string | null;
}) {
  const { conversations, activeId } = props;
  const [open, setOpen] = useState(false);
  useEffect(() => setOpen(false), [activeId]);

  return (
    <>
      <button
        type="button"
        class="secondary sidebar-toggle"
        aria-expanded={open}
        aria-controls="conversations"
        onClick={() => setOpen(!open)}
      >
        Conversations
      </button>
      <aside id="conversations" class={`sidebar${open ? ' open' : ''}`} aria-label="Conversations">
        <button type="button" class="new-chat" onClick={() => navigate('/')}>
          New chat
        </button>
        <ErrorNotice error={conversations.list.error} />
        <label class="conversation-search">
          Search conversations
          <input
            type="search"
            value={conversations.search}
            onInput={(event) => conversations.setSearch(event.currentTarget.value)}
          />
        </label>
        <ConversationList
          conversations={conversations.found}
          activeId={activeId}
          onChanged={() => void conversations.list.reload()}
        />
      </aside>
    </>
  );
}
