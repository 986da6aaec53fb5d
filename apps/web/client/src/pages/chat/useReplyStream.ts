import { useRef, useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type Problem } from '@switchyard/ui/client';
import { type Attachment, type ChatModel } from '../../api/types.js';
import { type ShownMessage } from '../../components/MessageView.js';
import { nextKey } from './keys.js';
import { type useMessagePaging } from './useMessagePaging.js';

/**
 * Asking: the question and an empty reply go on screen at once, the reply grows as it
 * streams in, and `stop` ends it where it is.
 */
export function useReplyStream(
  paging: ReturnType<typeof useMessagePaging>,
  choice: { model: string; models: ChatModel[] },
  /** A question refused before anything was saved (too few credits): it leaves the page. */
  refused: (problem: Problem, content: string) => void,
) {
  const [streaming, setStreaming] = useState(false);
  const controller = useRef<AbortController | null>(null);
  const { model, models } = choice;

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
    const questionKey = nextKey();
    paging.setMessages((all) => [
      ...all,
      {
        key: questionKey,
        role: 'user',
        content,
        images: [],
        ...(attachments.length > 0 ? { attachments } : {}),
      },
      reply,
    ]);
    const update = (change: (message: ShownMessage) => ShownMessage) =>
      paging.update(reply.key, change);
    const sending = new AbortController();
    controller.current = sending;
    setStreaming(true);
    await chat.sendMessage(
      conversationId,
      {
        content,
        model,
        ...(attachments.length > 0 ? { attachmentIds: attachments.map((a) => a.id) } : {}),
      },
      {
        delta: (text) => update((m) => ({ ...m, content: m.content + text })),
        images: (urls) => update((m) => ({ ...m, images: [...m.images, ...urls] })),
        toolDefinitions: (tokens) => update((m) => ({ ...m, toolDefinitionTokens: tokens })),
        toolStep: (step) => update((m) => ({ ...m, toolSteps: [...(m.toolSteps ?? []), step] })),
        done: (messageId, usage) =>
          update((m) => ({
            ...m,
            pending: false,
            ...(messageId !== undefined ? { id: messageId } : {}),
            ...(usage ? { usage } : {}),
          })),
        error: (problem) => {
          if (problem.code === 'insufficient_credits') {
            paging.setMessages((all) =>
              all.filter((m) => m.key !== reply.key && m.key !== questionKey),
            );
            refused(problem, content);
            return;
          }
          update((m) => ({ ...m, pending: false, error: problem }));
        },
      },
      sending.signal,
    );
    if (sending.signal.aborted) update((m) => ({ ...m, pending: false, stopped: true }));
    controller.current = null;
    setStreaming(false);
    chat.creditsChanged();
    await paging.learnIds(conversationId);
  };

  const stop = () => controller.current?.abort();

  return { ask, streaming, stop };
}
