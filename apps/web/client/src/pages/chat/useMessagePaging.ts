import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { withPrompts } from '../../components/generated-media.js';
import { type ShownMessage } from '../../components/MessageView.js';
import { nextKey } from './keys.js';

/** Near the top of the list, the page before is read. */
const SCROLL_MARGIN_PX = 80;

/**
 * The messages of the open conversation: its latest page when it opens, the page before
 * each time the user scrolls to the top, and the list kept scrolled to what they read.
 * `opening` runs before another conversation's messages are read (a reply still streaming
 * into the one left is stopped).
 */
export function useMessagePaging(activeId: string | null, opening: () => void) {
  const [messages, setMessages] = useState<ShownMessage[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  /** How many messages lie before the first one shown, still on the server. */
  const [older, setOlder] = useState(0);
  const [loadingOlder, setLoadingOlder] = useState(false);
  /** Set while older messages are added on top: the distance from the bottom to keep. */
  const keepScroll = useRef<number | null>(null);
  /** A conversation created by sending: its messages are already on screen. */
  const created = useRef<string | null>(null);
  const log = useRef<HTMLDivElement>(null);
  /** The conversation on screen now, for answers that arrive after the user moved on. */
  const activeIdRef = useRef(activeId);
  activeIdRef.current = activeId;

  useEffect(() => {
    if (activeId === null) {
      setMessages([]);
      setOlder(0);
      setError(null);
      return;
    }
    if (created.current === activeId) {
      created.current = null;
      return;
    }
    opening();
    let current = true;
    setLoading(true);
    chat
      .latestMessages(activeId)
      .then((loaded) => {
        if (!current) return;
        setMessages(
          withPrompts(loaded.messages.map((message) => ({ ...message, key: nextKey() }))),
        );
        setOlder(loaded.older);
        setError(null);
      })
      .catch((failure: unknown) => current && setError(failure))
      .finally(() => current && setLoading(false));
    return () => {
      current = false;
    };
  }, [activeId]);

  // Before the browser paints: older messages added on top keep what the user was reading
  // in place; anything else (a new message, a streamed chunk) shows the end.
  useLayoutEffect(() => {
    const element = log.current;
    if (!element) return;
    if (keepScroll.current !== null) {
      element.scrollTop = element.scrollHeight - keepScroll.current;
      keepScroll.current = null;
    } else {
      element.scrollTop = element.scrollHeight;
    }
  }, [messages]);

  /** Reads the page before the first message shown and puts it on top. */
  const loadOlder = async () => {
    const first = messages[0]?.id;
    if (activeId === null || older === 0 || loadingOlder || first === undefined) return;
    const conversationId = activeId;
    setLoadingOlder(true);
    try {
      const page = await chat.latestMessages(conversationId, first);
      if (conversationId !== activeIdRef.current) return;
      const element = log.current;
      keepScroll.current = element ? element.scrollHeight - element.scrollTop : null;
      setMessages((shown) =>
        withPrompts([
          ...page.messages.map((message) => ({ ...message, key: nextKey() })),
          ...shown,
        ]),
      );
      setOlder(page.older);
      setError(null);
    } catch (failure) {
      setError(failure);
    } finally {
      setLoadingOlder(false);
    }
  };
  const onScroll = () => {
    if ((log.current?.scrollTop ?? Infinity) < SCROLL_MARGIN_PX) void loadOlder();
  };

  /** The conversation was just created by sending: opening it must not read it again. */
  const adopt = (conversationId: string) => {
    created.current = conversationId;
  };

  const update = (key: string, change: (message: ShownMessage) => ShownMessage) =>
    setMessages((all) => all.map((message) => (message.key === key ? change(message) : message)));

  /** The question just sent has no id on screen yet; editing it needs one. The latest
   * page is matched to the end of what is shown when both hold the same messages. */
  const learnIds = async (conversationId: string) => {
    try {
      const saved = await chat.latestMessages(conversationId);
      setMessages((shown) => {
        if (saved.older + saved.messages.length !== older + shown.length) return shown;
        const offset = shown.length - saved.messages.length;
        return shown.map((message, index) => {
          const id = saved.messages[index - offset]?.id;
          return message.id === undefined && id !== undefined ? { ...message, id } : message;
        });
      });
    } catch {
      // Without ids the message simply offers no edit; the conversation is unharmed.
    }
  };

  return {
    messages,
    setMessages,
    update,
    error,
    loading,
    older,
    loadingOlder,
    loadOlder,
    log,
    onScroll,
    adopt,
    learnIds,
  };
}
