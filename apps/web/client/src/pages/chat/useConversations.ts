import { useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { useLoad } from '@switchyard/ui';

/** The user's conversations, the one on screen, and those the sidebar's search finds. */
export function useConversations(activeId: string | null) {
  const list = useLoad(chat.listConversations, []);
  const [search, setSearch] = useState('');
  const active = list.data?.find((c) => String(c.id) === activeId);
  const found = (list.data ?? []).filter((conversation) =>
    conversation.title.toLowerCase().includes(search.trim().toLowerCase()),
  );
  return { list, active, search, setSearch, found };
}
