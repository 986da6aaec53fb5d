// The largest request body each internal API takes. The public hop in front of it (the
// edge for admin, the web front for chat) applies the same limit, so an oversized body is
// a 413 at the first hop rather than a broken connection one hop later
// (docs/architecture.md, "Bad input").

const MiB = 1024 * 1024;

export const API_BODY_LIMITS = {
  /** Bulk channel imports and price tables carry thousands of rows. */
  admin: 8 * MiB,
  /** A message may carry a long conversation's worth of text. */
  chat: 2 * MiB,
} as const;

/**
 * Routes that take a few short fields (a username and a password): their bodies stop here
 * rather than at the API's limit, so a large hostile body is refused by its size before
 * anything parses it (docs/reliability.md, "Defects of the edges of the services").
 */
export const CREDENTIALS_BODY_LIMIT = 16 * 1024;

/**
 * Images users attach to chat messages (docs/specification.md, "Images"). An image is
 * uploaded alone (`POST /api/attachments`, its bytes as the body), so its limit is the body
 * limit of that route at both hops. The total per message keeps a request with every image
 * as a data URL (a third larger) under the gateway's default `MAX_BODY_BYTES` (10 MiB).
 */
export const IMAGE_LIMITS = {
  bytesPerImage: 5 * MiB,
  imagesPerMessage: 4,
  bytesPerMessage: 7 * MiB,
} as const;

/** The 413 message every hop gives, so clients see one wording whoever refused. */
export function bodyTooLargeMessage(limitBytes?: number): string {
  const limit = limitBytes === undefined ? '' : ` (${limitBytes} bytes)`;
  return `The request body is larger than this API accepts${limit}`;
}

/** The 413 message for an image over `IMAGE_LIMITS.bytesPerImage`, at every hop. */
export function imageTooLargeMessage(): string {
  return `An image may have at most ${IMAGE_LIMITS.bytesPerImage / MiB} MiB`;
}
