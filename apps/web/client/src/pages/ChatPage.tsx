import { memo } from 'preact/compat';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import * as chat from '../api/chat-api.js';
import { type Attachment, type ChatMessage, type Conversation } from '../api/types.js';
import { AttachImagesButton, DraftImages, type DraftImage } from '../components/ComposerImages.js';
import { screenImages } from '../components/image-checks.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { conversationAsMarkdown, exportFileName } from '../components/conversation-export.js';
import { EditMessage, MessageActions } from '../components/MessageActions.js';
import { withPrompts } from '../components/generated-media.js';
import { MessageView, type ShownMessage } from '../components/MessageView.js';
import { customModels, initialModel } from '../components/model-choice.js';
import { ModelPicker } from '../components/ModelPicker.js';
import { ToolPicker } from '../components/ToolPicker.js';
import { contextUse, nearLimit } from '../components/context-use.js';
import { Link, navigate, useLoad } from '@switchyard/ui';

let keys = 0;
const nextKey = () => `m${(keys += 1)}`;

function conversationIdFrom(path: string): string | null {
  const match = /^\/c\/([^/]+)$/.exec(path);
  return match?.[1] ? decodeURIComponent(match[1]) : null;
}

function titleFrom(content: string): string {
  const line = content.trim().split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || 'New chat';
}

export function ChatPage(props: { path: string }) {
  const activeId = conversationIdFrom(props.path);
  const conversations = useLoad(chat.listConversations, []);
  const available = useLoad(chat.listModels, []);
  const mcpServers = useLoad(chat.listMcpServers, []);
  const [serverIds, setServerIds] = useState<number[]>([]);
  const preferences = useLoad(chat.preferences, []);
  const imageLimits = useLoad(chat.attachmentLimits, []);
  const models = useMemo(() => {
    const listed = available.data ?? [];
    const custom = customModels(preferences.data?.customAssistants ?? []);
    return [...listed, ...custom.filter((c) => !listed.some((m) => m.name === c.name))];
  }, [available.data, preferences.data]);
  const active = conversations.data?.find((c) => String(c.id) === activeId);

  const [model, setModel] = useState('');
  const [messages, setMessages] = useState<ShownMessage[]>([]);
  const [messagesError, setMessagesError] = useState<unknown>(null);
  const [loadingMessages, setLoadingMessages] = useState(false);
  /** How many messages lie before the first one shown, still on the server. */
  const [older, setOlder] = useState(0);
  const [loadingOlder, setLoadingOlder] = useState(false);
  /** Set while older messages are added on top: the distance from the bottom to keep. */
  const keepScroll = useRef<number | null>(null);
  const [draft, setDraft] = useState('');
  const [images, setImages] = useState<DraftImage[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [streaming, setStreaming] = useState(false);
  const [sidebarOpen, setSidebarOpen] = useState(false);
  /** The index of the question being edited. */
  const [editing, setEditing] = useState<number | null>(null);
  const [search, setSearch] = useState('');
  const stop = useRef<AbortController | null>(null);
  /** A conversation created by sending: its messages are already on screen. */
  const created = useRef<string | null>(null);
  const log = useRef<HTMLDivElement>(null);
  /** The conversation on screen now, for answers that arrive after the user moved on. */
  const activeIdRef = useRef(activeId);
  activeIdRef.current = activeId;

  // Preselect once both the models and the user's last choice are known (a failed
  // preferences load still lets the user chat, with the first chat model).
  useEffect(() => {
    if (model !== '' || available.loading || preferences.loading) return;
    setModel(initialModel(models, preferences.data?.model ?? null));
  }, [models, available.loading, preferences.loading]);
  useEffect(() => {
    if (active?.model) setModel(active.model);
    setServerIds(active?.mcpServerIds ?? []);
  }, [active?.id]);

  useEffect(() => {
    setSidebarOpen(false);
    setEditing(null);
    if (activeId === null) {
      setMessages([]);
      setOlder(0);
      setMessagesError(null);
      return;
    }
    if (created.current === activeId) {
      created.current = null;
      return;
    }
    stop.current?.abort();
    let current = true;
    setLoadingMessages(true);
    chat
      .latestMessages(activeId)
      .then((loaded) => {
        if (!current) return;
        setMessages(
          withPrompts(loaded.messages.map((message) => ({ ...message, key: nextKey() }))),
        );
        setOlder(loaded.older);
        setMessagesError(null);
      })
      .catch((failure: unknown) => current && setMessagesError(failure))
      .finally(() => current && setLoadingMessages(false));
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
      setMessagesError(null);
    } catch (failure) {
      setMessagesError(failure);
    } finally {
      setLoadingOlder(false);
    }
  };
  /** Near the top of the list, the page before is read. */
  const SCROLL_MARGIN_PX = 80;
  const onLogScroll = () => {
    if ((log.current?.scrollTop ?? Infinity) < SCROLL_MARGIN_PX) void loadOlder();
  };

  const chooseModel = (name: string) => {
    setModel(name);
    // Remembering the choice is a convenience: a failure must not stop the chat.
    chat.chooseModel(name).catch(() => undefined);
  };

  const chooseServers = async (ids: number[]) => {
    setServerIds(ids);
    if (activeId === null) return;
    try {
      await chat.setConversationServers(activeId, ids);
      void conversations.reload();
    } catch (failure) {
      setError(failure);
    }
  };

  const updateReply = (key: string, change: (message: ShownMessage) => ShownMessage) =>
    setMessages((all) => all.map((message) => (message.key === key ? change(message) : message)));

  const chosen = models.find((m) => m.name === model);
  const imagesRefused = chosen?.vision
    ? null
    : `${model || 'The chosen model'} does not read images: choose a model that does to attach them`;
  const uploading = images.some((image) => !image.attachment);

  const removeImage = (key: string) =>
    setImages((all) => {
      const gone = all.find((image) => image.key === key);
      if (gone) URL.revokeObjectURL(gone.preview);
      return all.filter((image) => image !== gone);
    });

  /** Checks, shows and uploads images chosen or pasted into the composer. */
  const addImages = (files: File[]) => {
    if (imagesRefused !== null) {
      setError({ code: 'model_cannot_see_images', message: imagesRefused });
      return;
    }
    const limits = imageLimits.data;
    const attached = images.map((image) => ({ size: image.size }));
    const { accepted, problems } = limits
      ? screenImages(files, attached, limits)
      : { accepted: files, problems: [] };
    setError(problems.length > 0 ? { code: 'image_not_taken', message: problems.join(' ') } : null);
    for (const file of accepted) {
      const image: DraftImage = {
        key: nextKey(),
        name: file.name || 'pasted image',
        size: file.size,
        preview: URL.createObjectURL(file),
      };
      setImages((all) => [...all, image]);
      chat.uploadImage(file).then(
        (attachment) =>
          setImages((all) => all.map((i) => (i.key === image.key ? { ...i, attachment } : i))),
        (failure: unknown) => {
          removeImage(image.key);
          setError(failure);
        },
      );
    }
  };

  /** Sends `content` (and its images) in the conversation and streams the reply into the page. */
  const ask = async (conversationId: string, content: string, attachments: Attachment[] = []) => {
    const purpose = models.find((m) => m.name === model)?.purpose;
    const reply: ShownMessage = {
      key: nextKey(),
      role: 'assistant',
      content: '',
      images: [],
      model,
      pending: true,
      ...(purpose === 'drawing' ? { prompt: content } : {}),
    };
    setMessages((all) => [
      ...all,
      {
        key: nextKey(),
        role: 'user',
        content,
        images: [],
        ...(attachments.length > 0 ? { attachments } : {}),
      },
      reply,
    ]);
    const controller = new AbortController();
    stop.current = controller;
    setStreaming(true);
    await chat.sendMessage(
      conversationId,
      {
        content,
        model,
        ...(attachments.length > 0 ? { attachmentIds: attachments.map((a) => a.id) } : {}),
      },
      {
        delta: (text) => updateReply(reply.key, (m) => ({ ...m, content: m.content + text })),
        images: (urls) => updateReply(reply.key, (m) => ({ ...m, images: [...m.images, ...urls] })),
        toolDefinitions: (tokens) =>
          updateReply(reply.key, (m) => ({ ...m, toolDefinitionTokens: tokens })),
        toolStep: (step) =>
          updateReply(reply.key, (m) => ({ ...m, toolSteps: [...(m.toolSteps ?? []), step] })),
        done: (messageId, usage) =>
          updateReply(reply.key, (m) => ({
            ...m,
            pending: false,
            ...(messageId !== undefined ? { id: messageId } : {}),
            ...(usage ? { usage } : {}),
          })),
        error: (problem) =>
          updateReply(reply.key, (m) => ({ ...m, pending: false, error: problem })),
      },
      controller.signal,
    );
    if (controller.signal.aborted)
      updateReply(reply.key, (m) => ({ ...m, pending: false, stopped: true }));
    stop.current = null;
    setStreaming(false);
    await learnIds(conversationId);
  };

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

  const send = async (event?: Event) => {
    event?.preventDefault();
    const content = draft.trim();
    if (content === '' || streaming || uploading) return;
    if (model === '') {
      setError({ code: 'validation_failed', message: 'Choose a model first.' });
      return;
    }
    setError(null);
    let conversationId: string | null = activeId;
    if (conversationId === null) {
      try {
        const conversation = await chat.createConversation(titleFrom(content), model, serverIds);
        conversationId = conversation.id;
        created.current = String(conversation.id);
        navigate(`/c/${encodeURIComponent(String(conversation.id))}`);
        void conversations.reload();
      } catch (failure) {
        setError(failure);
        return;
      }
    }
    const attachments = images.flatMap((image) => (image.attachment ? [image.attachment] : []));
    setDraft('');
    for (const image of images) URL.revokeObjectURL(image.preview);
    setImages([]);
    await ask(conversationId, content, attachments);
  };

  /** Replaces the question at `index` and all after it by `content`, asked again. */
  const resendFrom = async (index: number, content: string) => {
    const question = messages[index];
    if (activeId === null || question?.id === undefined || streaming) return;
    setEditing(null);
    setError(null);
    try {
      await chat.deleteMessagesFrom(activeId, question.id);
    } catch (failure) {
      setError(failure);
      return;
    }
    setMessages((all) => all.slice(0, index));
    // The question's images were kept, unsent again: it is asked with them.
    await ask(activeId, content, question.attachments ?? []);
  };

  const regenerate = (replyIndex: number) => {
    const questionIndex = messages.findLastIndex(
      (message, index) => index < replyIndex && message.role === 'user',
    );
    const question = messages[questionIndex];
    if (question) void resendFrom(questionIndex, question.content);
  };

  /** The whole conversation, not only the pages on screen. */
  const exportConversation = async () => {
    if (activeId === null) return;
    const title = active?.title ?? 'Conversation';
    let all: ChatMessage[];
    try {
      all = await chat.listMessages(activeId);
    } catch (failure) {
      setError(failure);
      return;
    }
    const blob = new Blob([conversationAsMarkdown(title, all)], { type: 'text/markdown' });
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = exportFileName(title);
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 0);
  };

  const lastReply = messages.findLastIndex((message) => message.role === 'assistant');
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
  const context = contextUse(messages, models.find((m) => m.name === model)?.contextTokens);

  return (
    <div class="chat-layout">
      <button
        type="button"
        class="secondary sidebar-toggle"
        aria-expanded={sidebarOpen}
        aria-controls="conversations"
        onClick={() => setSidebarOpen(!sidebarOpen)}
      >
        Conversations
      </button>
      <aside
        id="conversations"
        class={`sidebar${sidebarOpen ? ' open' : ''}`}
        aria-label="Conversations"
      >
        <button type="button" class="new-chat" onClick={() => navigate('/')}>
          New chat
        </button>
        <ErrorNotice error={conversations.error} />
        <label class="conversation-search">
          Search conversations
          <input
            type="search"
            value={search}
            onInput={(event) => setSearch(event.currentTarget.value)}
          />
        </label>
        <ConversationList
          conversations={(conversations.data ?? []).filter((conversation) =>
            conversation.title.toLowerCase().includes(search.trim().toLowerCase()),
          )}
          activeId={activeId}
          onChanged={() => void conversations.reload()}
        />
      </aside>
      <main id="main" class="chat-main">
        <h1 class="visually-hidden">{active?.title ?? 'New chat'}</h1>
        <div class="chat-toolbar">
          <ModelPicker
            models={models}
            value={model}
            disabled={streaming}
            onChange={chooseModel}
            onCustomAdded={(saved) => {
              void preferences.reload();
              if (saved.model) setModel(saved.model);
            }}
          />
          <ToolPicker
            servers={mcpServers.data ?? []}
            value={serverIds}
            disabled={streaming}
            onChange={(ids) => void chooseServers(ids)}
          />
          {activeId !== null && messages.length > 0 && (
            <button type="button" class="secondary" onClick={() => void exportConversation()}>
              Export as Markdown
            </button>
          )}
        </div>
        <ErrorNotice error={available.error} />
        {nearLimit(context) && (
          <div class="notice" role="status">
            <p class="notice-title">
              {context.tokens >= context.limit
                ? "This conversation no longer fits the model's context window"
                : "This conversation is nearing the model's context window"}
            </p>
            <p>
              It takes about {context.tokens.toLocaleString()} of the{' '}
              {context.limit.toLocaleString()} tokens {model} can read (
              {Math.round((context.tokens / context.limit) * 100)} %)
              {context.toolDefinitionTokens > 0 &&
                `, ${context.toolDefinitionTokens.toLocaleString()} of them tool definitions`}
              . Past the window the model no longer sees the start: start a new chat
              {context.toolDefinitionTokens > 0 && ', or turn off the tools you do not need'}.
            </p>
          </div>
        )}
        {!available.loading && !available.error && models.length === 0 && (
          <div class="notice" role="status">
            <p class="notice-title">No model is available to you yet.</p>
            <p>
              Ask an administrator to open a model to all users or to give you the permission for
              one.
            </p>
          </div>
        )}
        <div
          class="messages"
          ref={log}
          role="log"
          aria-label="Messages"
          aria-live="polite"
          aria-busy={streaming || loadingMessages}
          tabIndex={0}
          onScroll={onLogScroll}
        >
          {older > 0 && (
            <button
              type="button"
              class="secondary load-older"
              disabled={loadingOlder}
              onClick={() => void loadOlder()}
            >
              {loadingOlder ? 'Loading earlier messages…' : 'Load earlier messages'}
            </button>
          )}
          <ErrorNotice error={messagesError} />
          {messages.length === 0 && !loadingMessages && !messagesError && (
            <p class="empty">Start the conversation by writing a message below.</p>
          )}
          {messages.map((message, index) => (
            <MessageRow
              key={message.key}
              message={message}
              index={index}
              editing={editing === index}
              canChange={!streaming && message.id !== undefined && activeId !== null}
              lastReply={index === lastReply}
              actions={rowActions}
            />
          ))}
        </div>
        <form class="composer" onSubmit={(event) => void send(event)}>
          <ErrorNotice error={error} onDismiss={() => setError(null)} />
          <label for="composer" class="visually-hidden">
            Message
          </label>
          <textarea
            id="composer"
            rows={3}
            placeholder="Write a message. Enter sends, Shift+Enter adds a line."
            value={draft}
            onInput={(event) => setDraft(event.currentTarget.value)}
            onKeyDown={(event) => {
              if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
                event.preventDefault();
                void send();
              }
            }}
            onPaste={(event) => {
              const pasted = [...(event.clipboardData?.files ?? [])].filter((file) =>
                file.type.startsWith('image/'),
              );
              if (pasted.length === 0) return;
              event.preventDefault();
              addImages(pasted);
            }}
          />
          <DraftImages images={images} onRemove={removeImage} />
          {images.length > 0 && imagesRefused !== null && (
            <p class="notice" role="status">
              {imagesRefused}, or remove the images.
            </p>
          )}
          <div class="composer-actions">
            <AttachImagesButton
              accept={(imageLimits.data?.mediaTypes ?? []).join(',') || 'image/*'}
              disabledReason={streaming ? 'Wait for the reply' : imagesRefused}
              onFiles={addImages}
            />
            {streaming ? (
              <button type="button" class="secondary" onClick={() => stop.current?.abort()}>
                Stop
              </button>
            ) : (
              <button
                type="submit"
                disabled={
                  draft.trim() === '' || uploading || (images.length > 0 && imagesRefused !== null)
                }
              >
                Send
              </button>
            )}
          </div>
        </form>
      </main>
    </div>
  );
}

interface RowActions {
  edit(index: number): void;
  cancelEdit(): void;
  resend(index: number, content: string): void;
  regenerate(index: number): void;
}

/** One message and what can be done with it; memoised, so a streamed chunk redraws only
 * the reply it belongs to. */
const MessageRow = memo(function MessageRow(props: {
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

function ConversationList(props: {
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
