import { memo } from 'preact/compat';
import { type ChatMessage } from '../api/types.js';
import { type Problem } from '@switchyard/ui';
import { AttachedImages } from './AttachedImages.js';
import { ErrorNotice } from './ErrorNotice.js';
import { audioUrlsIn } from './generated-media.js';
import { GeneratedImages, SongPlayers } from './GeneratedMedia.js';
import { MarkdownContent } from './MarkdownContent.js';
import { ToolSteps } from './ToolSteps.js';

export interface ShownMessage extends ChatMessage {
  /** A stable key for the list while the message has no id yet. */
  key: string;
  pending?: boolean;
  stopped?: boolean;
  error?: Problem;
  /** The prompt an image answers, for its text alternative. */
  prompt?: string;
  /** What the tool definitions cost of each model call's prompt, when tools were offered. */
  toolDefinitionTokens?: number;
}

/** Memoised: a streamed chunk changes one message object, so only its view redraws. */
export const MessageView = memo(function MessageView(props: { message: ShownMessage }) {
  const { message } = props;
  const mine = message.role === 'user';
  // A link still streaming may be cut short: players appear once the reply is in.
  const songs = mine || message.pending ? [] : audioUrlsIn(message.content);
  return (
    <article class={`message ${mine ? 'message-user' : 'message-assistant'}`}>
      <h3 class="visually-hidden">
        {mine ? 'You' : `Assistant${message.model ? ` (${message.model})` : ''}`}
      </h3>
      {message.toolSteps && <ToolSteps steps={message.toolSteps} />}
      {message.attachments && <AttachedImages attachments={message.attachments} />}
      {message.content !== '' &&
        (mine ? (
          <div class="message-text">{message.content}</div>
        ) : (
          <MarkdownContent source={message.content} />
        ))}
      {message.pending && message.content === '' && message.images.length === 0 && (
        <p class="message-status">Waiting for the reply…</p>
      )}
      {message.images.length > 0 && (
        <GeneratedImages urls={message.images} prompt={message.prompt} />
      )}
      {songs.length > 0 && <SongPlayers urls={songs} />}
      {message.error && <ErrorNotice error={message.error} />}
      {message.stopped && <p class="message-status">Stopped.</p>}
      {/* A question costs nothing of its own: its tokens are counted in the reply's prompt. */}
      {message.usage && message.role === 'assistant' && (
        <p class="message-usage">
          {message.usage.promptTokens} prompt + {message.usage.completionTokens} completion tokens
          {message.toolDefinitionTokens !== undefined &&
            ` (tool definitions ≈${message.toolDefinitionTokens} prompt tokens a call)`}
        </p>
      )}
    </article>
  );
});
