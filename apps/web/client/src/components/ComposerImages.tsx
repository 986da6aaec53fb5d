import { useRef } from 'preact/hooks';
import { type Attachment } from '../api/types.js';
import { sizeText } from './image-checks.js';

/** An image in the composer: shown from the file at once, sent by its id once uploaded. */
export interface DraftImage {
  key: string;
  name: string;
  size: number;
  /** An object URL of the file, revoked when the image leaves the composer. */
  preview: string;
  /** Set once the upload succeeded. */
  attachment?: Attachment;
}

export const IMAGE_INPUT_ID = 'attach-images';

/**
 * The file picker behind a button. Disabled (with the reason as its description) while the
 * chosen model reads no images.
 */
export function AttachImagesButton(props: {
  accept: string;
  disabledReason: string | null;
  onFiles: (files: File[]) => void;
}) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <input
        ref={input}
        id={IMAGE_INPUT_ID}
        type="file"
        accept={props.accept}
        multiple
        hidden
        onChange={(event) => {
          const files = [...(event.currentTarget.files ?? [])];
          // The same file may be chosen again after it was removed.
          event.currentTarget.value = '';
          if (files.length > 0) props.onFiles(files);
        }}
      />
      <button
        type="button"
        class="secondary"
        disabled={props.disabledReason !== null}
        aria-describedby={props.disabledReason === null ? undefined : 'attach-images-why'}
        title={props.disabledReason ?? 'PNG, JPEG, WebP or GIF; you can also paste images'}
        onClick={() => input.current?.click()}
      >
        Attach images
      </button>
      {props.disabledReason !== null && (
        <span id="attach-images-why" class="visually-hidden">
          {props.disabledReason}
        </span>
      )}
    </>
  );
}

/** The images waiting to be sent, each with a button that takes it out. */
export function DraftImages(props: { images: DraftImage[]; onRemove: (key: string) => void }) {
  if (props.images.length === 0) return null;
  return (
    <ul class="draft-images" aria-label="Images to send">
      {props.images.map((image, index) => (
        <li key={image.key}>
          <img src={image.preview} alt={`Image ${index + 1} to send: ${image.name}`} />
          <span class="draft-image-note">
            {image.attachment ? sizeText(image.size) : 'Uploading…'}
          </span>
          <button
            type="button"
            class="link-button danger"
            aria-label={`Remove image ${index + 1} (${image.name})`}
            onClick={() => props.onRemove(image.key)}
          >
            Remove
          </button>
        </li>
      ))}
    </ul>
  );
}
