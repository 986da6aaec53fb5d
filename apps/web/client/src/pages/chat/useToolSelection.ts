import { useEffect, useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type Conversation } from '../../api/types.js';
import { useLoad } from '@switchyard/ui';

/**
 * The MCP servers the user may enable and those enabled: the open conversation's, or the
 * choice a new conversation will be created with.
 */
export function useToolSelection(
  active: Conversation | undefined,
  activeId: string | null,
  events: { saved: () => void; failed: (failure: unknown) => void },
) {
  const servers = useLoad(chat.listMcpServers, []);
  const [serverIds, setServerIds] = useState<number[]>([]);

  useEffect(() => {
    setServerIds(active?.mcpServerIds ?? []);
  }, [active?.id]);

  const choose = async (ids: number[]) => {
    setServerIds(ids);
    if (activeId === null) return;
    try {
      await chat.setConversationServers(activeId, ids);
      events.saved();
    } catch (failure) {
      events.failed(failure);
    }
  };

  return { servers, serverIds, choose };
}
