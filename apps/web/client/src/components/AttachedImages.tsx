import { useEffect, useState } from 'preact/hooks';
import { readAttachment } from '../api/chat-api.js';
import { type Attachment } from '../api/types.js';

/**
 * The images of a question as thumbnails, each opening the full image in a new tab. Their
 * URLs need the session, so each is read once and shown from an object URL.
 */
export function AttachedImages(props: { attachments: Attachment[] }) {
  return (
    <ul class="attached-images" aria-label="Attached images">
      {props.attachments.map((attachment, index) => (
        <li key={attachment.id}>
          <AttachedImage attachment={attachment} label={`Attached image ${index + 1}`} />
        </li>
      ))}
    </ul>
  );
}

function AttachedImage(props: { attachment: Attachment; label: string }) {
  const [url, setUrl] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let objectUrl: string | null = null;
    let current = true;
    readAttachment(props.attachment).then(
      (blob) => {
        if (!current) return;
        objectUrl = URL.createObjectURL(blob);
        setUrl(objectUrl);
      },
      () => current && setFailed(true),
    );
    return () => {
      current = false;
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [props.attachment.id]);
  if (failed) return <span class="attached-image-missing">{props.label} is unavailable</span>;
  if (url === null) return <span class="attached-image-loading">Loading {props.label}…</span>;
  return (
    <a href={url} target="_blank" rel="noopener noreferrer" title="Open the full image">
      <img src={url} alt={props.label} />
    </a>
  );
}
