import { downloadMedia, mediaFileName } from './generated-media.js';

/** Saves through `downloadMedia`; the link itself is the fallback without scripts. */
function DownloadLink(props: { url: string; fileName: string; label: string }) {
  return (
    <a
      class="media-download"
      href={props.url}
      download={props.fileName}
      onClick={(event) => {
        event.preventDefault();
        void downloadMedia(props.url, props.fileName);
      }}
    >
      Download<span class="visually-hidden"> {props.label}</span>
    </a>
  );
}

/** A drawn reply's images: each opens full size in a new tab and can be downloaded. */
export function GeneratedImages(props: { urls: string[]; prompt?: string | undefined }) {
  return (
    <div class="message-images">
      {props.urls.map((url, index) => {
        const label = `image ${index + 1}`;
        return (
          <figure key={url} class="generated-media">
            <a href={url} target="_blank" rel="noopener noreferrer">
              <img
                src={url}
                loading="lazy"
                alt={`Generated image ${index + 1}${props.prompt ? ` for: ${props.prompt}` : ''}`}
              />
            </a>
            <figcaption class="media-actions">
              <a href={url} target="_blank" rel="noopener noreferrer">
                Open full size<span class="visually-hidden"> {label}</span>
              </a>
              <DownloadLink url={url} fileName={mediaFileName(url, 'image', index)} label={label} />
            </figcaption>
          </figure>
        );
      })}
    </div>
  );
}

/** The songs a reply links to, each with a player and a download. */
export function SongPlayers(props: { urls: string[] }) {
  return (
    <div class="message-audio">
      {props.urls.map((url, index) => {
        const label = `song ${index + 1}`;
        return (
          <figure key={url} class="generated-media">
            <audio controls preload="metadata" src={url} aria-label={`Song ${index + 1}`} />
            <figcaption class="media-actions">
              <DownloadLink url={url} fileName={mediaFileName(url, 'audio', index)} label={label} />
            </figcaption>
          </figure>
        );
      })}
    </div>
  );
}
