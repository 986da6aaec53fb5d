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

/** The 413 message every hop gives, so clients see one wording whoever refused. */
export function bodyTooLargeMessage(limitBytes?: number): string {
  const limit = limitBytes === undefined ? '' : ` (${limitBytes} bytes)`;
  return `The request body is larger than this API accepts${limit}`;
}
