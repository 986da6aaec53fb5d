import { ApiError } from '@switchyard/contracts';

// Request headers an administrator gives for an outside service (an MCP server, a remote
// A2A agent): checked here, then sealed as one JSON object.

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;
const MAX_HEADERS = 32;
const MAX_HEADER_VALUE = 8192;
/** The headers as given, or a 400 naming the first bad one. */
export function validateHeaders(headers: Record<string, unknown>): Record<string, string> {
  const entries = Object.entries(headers);
  const fail = (message: string) =>
    new ApiError('validation_failed', message, [{ field: 'headers', message }]);
  if (entries.length > MAX_HEADERS) throw fail(`headers may have at most ${MAX_HEADERS} entries`);
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name)) throw fail(`"${name}" is not a valid header name`);
    if (typeof value !== 'string' || /[\r\n\0]/.test(value) || value.length > MAX_HEADER_VALUE) {
      throw fail(`header "${name}" must be a single-line string of at most ${MAX_HEADER_VALUE}`);
    }
  }
  return headers as Record<string, string>;
}
