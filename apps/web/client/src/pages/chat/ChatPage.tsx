import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { contextUse } from '../../components/context-use.js';
import { ErrorNotice } from '../../components/ErrorNotice.js';
import { ModelPicker } from '../../components/ModelPicker.js';
import { ToolPicker } from '../../components/ToolPicker.js';
import { navigate } from '@switchyard/ui';
import { ContextNotice, NoModelNotice } from './ChatNotices.js';
import { Composer } from './Composer.js';
import { ConversationSidebar } from './ConversationSidebar.js';
import { downloadConversation } from './download.js';
import { MessageLog } from './MessageLog.js';
import { type RowActions } from './MessageRow.js';
import { useAttachments } from './useAttachments.js';
import { useConversations } from './useConversations.js';
import { useMessagePaging } from './useMessagePaging.js';
import { useModelChoice } from './useModelChoice.js';
import { useReplyStream } from './useReplyStream.js';
import { useToolSelection } from './useToolSelection.js';

function conversationIdFrom(path: string): string | null {
  const match = /^\/c\/([^/]+)$/.exec(path);
  return match?.[1] ? decodeURIComponent(match[1]) : null;
}

function titleFrom(content: string): string {
  const line = content.trim().split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || 'New chat';
}

/**
 * The chat: the conversations beside it, the open one's messages, and the composer. What
 * each part knows lives in its hook (./use*.ts); the page asks, edits and asks again.
 */
export function ChatPage(props: { path: string }) {
  const activeId = conversationIdFrom(props.path);
  /** The composer's failure: a send, an image, the tools, an export. */
  const [error, setError] = useState<unknown>(null);
  const [draft, setDraft] = useState('');
  /** The index of the question being edited. */
  const [editing, setEditing] = useState<number | null>(null);
  useEffect(() => setEditing(null), [activeId]);

  const conversations = useConversations(activeId);
  const { active } = conversations;
  const choice = useModelChoice(active);
  const { model, models } = choice;
  const tools = useToolSelection(active, activeId, {
    saved: () => void conversations.list.reload(),
    failed: setError,
  });
  // Opening another conversation stops a reply still streaming into the one left.
  const paging = useMessagePaging(activeId, () => reply.stop());
  const { messages } = paging;
  const reply = useReplyStream(paging, choice, (problem, content) => {
    setError(problem);
    setDraft(content);
  });
  const images = useAttachments(model, choice.chosen, setError);

  const send = async () => {
    const content = draft.trim();
    if (content === '' || reply.streaming || images.uploading) return;
    if (model === '') {
      setError({ code: 'validation_failed', message: 'Choose a model first.' });
      return;
    }
    setError(null);
    let conversationId: string | null = activeId;
    if (conversationId === null) {
      try {
        const conversation = await chat.createConversation(
          titleFrom(content),
          model,
          tools.serverIds,
        );
        conversationId = conversation.id;
        paging.adopt(String(conversation.id));
        navigate(`/c/${encodeURIComponent(String(conversation.id))}`);
        void conversations.list.reload();
      } catch (failure) {
        setError(failure);
        return;
      }
    }
    setDraft('');
    await reply.ask(conversationId, content, images.takeAll());
  };

  /** Replaces the question at `index` and all after it by `content`, asked again. */
  const resendFrom = async (index: number, content: string) => {
    const question = messages[index];
    if (activeId === null || question?.id === undefined || reply.streaming) return;
    setEditing(null);
    setError(null);
    try {
      await chat.deleteMessagesFrom(activeId, question.id);
    } catch (failure) {
      setError(failure);
      return;
    }
    paging.setMessages((all) => all.slice(0, index));
    // The question's images were kept, unsent again: it is asked with them.
    await reply.ask(activeId, content, question.attachments ?? []);
  };

  const regenerate = (replyIndex: number) => {
    const questionIndex = messages.findLastIndex(
      (message, index) => index < replyIndex && message.role === 'user',
    );
    const question = messages[questionIndex];
    if (question) void resendFrom(questionIndex, question.content);
  };

  const exportConversation = async () => {
    if (activeId === null) return;
    try {
      await downloadConversation(activeId, active?.title ?? 'Conversation');
    } catch (failure) {
      setError(failure);
    }
  };

  // One object for the whole life of the page, calling the latest handlers: rows that did
  // not change are then not drawn again while a reply streams.
  const handlers = useRef({ resendFrom, regenerate });
  handlers.current = { resendFrom, regenerate };
  const rowActions = useMemo<RowActions>(
    () => ({
      edit: (index) => setEditing(index),
      cancelEdit: () => setEditing(null),
      resend: (index, content) => void handlers.current.resendFrom(index, content),
      regenerate: (index) => handlers.current.regenerate(index),
    }),
    [],
  );

  return (
    <div class="chat-layout">
      <ConversationSidebar conversations={conversations} activeId={activeId} />
      <main id="main" class="chat-main">
        <h1 class="visually-hidden">{active?.title ?? 'New chat'}</h1>
        <div class="chat-toolbar">
          <ModelPicker
            models={models}
            value={model}
            disabled={reply.streaming}
            onChange={choice.choose}
            onCustomAdded={choice.customAdded}
          />
          <ToolPicker
            servers={tools.servers.data ?? []}
            value={tools.serverIds}
            disabled={reply.streaming}
            onChange={(ids) => void tools.choose(ids)}
          />
          {activeId !== null && messages.length > 0 && (
            <button type="button" class="secondary" onClick={() => void exportConversation()}>
              Export as Markdown
            </button>
          )}
        </div>
        <ErrorNotice error={choice.available.error} />
        <ContextNotice context={contextUse(messages, choice.chosen?.contextTokens)} model={model} />
        {!choice.available.loading && !choice.available.error && models.length === 0 && (
          <NoModelNotice />
        )}
        <MessageLog
          paging={paging}
          streaming={reply.streaming}
          saved={activeId !== null}
          editing={editing}
          actions={rowActions}
        />
        <Composer
          draft={draft}
          onDraft={setDraft}
          images={images}
          streaming={reply.streaming}
          error={error}
          onDismissError={() => setError(null)}
          onSend={() => void send()}
          onStop={reply.stop}
        />
      </main>
    </div>
  );
}
