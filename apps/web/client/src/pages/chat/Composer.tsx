import { AttachImagesButton, DraftImages } from '../../components/ComposerImages.js';
import { ErrorNotice } from '../../components/ErrorNotice.js';
import { type useAttachments } from './useAttachments.js';

/**
 * Where the question is written: Enter sends, Shift+Enter adds a line, pasted or chosen
 * images are attached; while a reply streams, Send becomes Stop.
 */
export function Composer(props: {
  draft: string;
  onDraft: (draft: string) => void;
  images: ReturnType<typeof useAttachments>;
  streaming: boolean;
  error: unknown;
  onDismissError: () => void;
  onSend: () => void;
  onStop: () => void;
}) {
  const { images, streaming } = props;
  return (
    <form
      class="composer"
      onSubmit={(event) => {
        event.preventDefault();
        props.onSend();
      }}
    >
      <ErrorNotice error={props.error} onDismiss={props.onDismissError} />
      <label for="composer" class="visually-hidden">
        Message
      </label>
      <textarea
        id="composer"
        rows={3}
        placeholder="Write a message. Enter sends, Shift+Enter adds a line."
        value={props.draft}
        onInput={(event) => props.onDraft(event.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
            event.preventDefault();
            props.onSend();
          }
        }}
        onPaste={(event) => {
          const pasted = [...(event.clipboardData?.files ?? [])].filter((file) =>
            file.type.startsWith('image/'),
          );
          if (pasted.length === 0) return;
          event.preventDefault();
          images.add(pasted);
        }}
      />
      <DraftImages images={images.images} onRemove={images.remove} />
      {images.images.length > 0 && images.refused !== null && (
        <p class="notice" role="status">
          {images.refused}, or remove the images.
        </p>
      )}
      <div class="composer-actions">
        <AttachImagesButton
          accept={images.accept}
          disabledReason={streaming ? 'Wait for the reply' : images.refused}
          onFiles={images.add}
        />
        {streaming ? (
          <button type="button" class="secondary" onClick={props.onStop}>
            Stop
          </button>
        ) : (
          <button
            type="submit"
            disabled={
              props.draft.trim() === '' ||
              images.uploading ||
              (images.images.length > 0 && images.refused !== null)
            }
          >
            Send
          </button>
        )}
      </div>
    </form>
  );
}
