import { GatewayError } from '@switchyard/contracts';
import { invalid } from '../request-body.js';

// Reading a multipart/form-data upload (RFC 7578) as much as the edge needs: its small
// fields as text, where its file lies. The body is already in memory (the edge reads raw
// bytes, proxy/raw-body.ts) and is forwarded as it came, so nothing is copied: the file is
// a range of the body, found with Buffer.indexOf, not a Blob the size of the upload again
// (which a WHATWG `FormData` parse would make).

/** A part's place in the body. */
export interface Span {
  start: number;
  end: number;
}

export interface UploadedFile extends Span {
  filename: string;
  contentType: string;
}

export interface MultipartForm {
  fields: Map<string, string>;
  /** Where each field's value lies, to rename the model without reading the form again. */
  spans: Map<string, Span>;
  files: Map<string, UploadedFile>;
}

/** A field is a word or a number; anything longer is not one OpenAI's audio API takes. */
const MAX_FIELD_BYTES = 64 * 1024;
const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');

/** The boundary of a multipart/form-data content type; null for any other type. */
export function boundaryOf(contentType: string | undefined): string | null {
  if (!contentType || !/^\s*multipart\/form-data\s*(;|$)/i.test(contentType)) return null;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType);
  return match ? (match[1] ?? match[2] ?? null) : null;
}

function unreadable(reason: string): GatewayError {
  return invalid(`The multipart/form-data body could not be read: ${reason}.`, null);
}

/** The value of `name="..."` (or `filename="..."`) in a Content-Disposition header. */
function parameter(header: string, name: string): string | undefined {
  const match = new RegExp(`(?:^|;)\\s*${name}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(header);
  return match?.[1]?.replace(/\\(.)/g, '$1');
}

/** The fields and files of `body`, split at `boundary`; a 400 when it is not such a form. */
export function readMultipart(body: Buffer, boundary: string): MultipartForm {
  const delimiter = Buffer.from(`--${boundary}`);
  const next = Buffer.from(`\r\n--${boundary}`);
  const form: MultipartForm = { fields: new Map(), spans: new Map(), files: new Map() };
  let at = body.indexOf(delimiter);
  if (at < 0) throw unreadable('no part starts with its boundary');
  at += delimiter.length;
  for (;;) {
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return form; // `--`: the last boundary
    if (body.compare(CRLF, 0, 2, at, at + 2) !== 0) throw unreadable('a boundary is malformed');
    const headersEnd = body.indexOf(HEADERS_END, at);
    if (headersEnd < 0) throw unreadable('a part has no end to its headers');
    const headers = body.toString('latin1', at + 2, headersEnd).split('\r\n');
    const start = headersEnd + HEADERS_END.length;
    const end = body.indexOf(next, start);
    if (end < 0) throw unreadable('the body ends before its closing boundary');
    const header = (name: string) =>
      headers
        .find((line) => line.toLowerCase().startsWith(`${name}:`))
        ?.slice(name.length + 1)
        .trim();
    const disposition = header('content-disposition') ?? '';
    const name = parameter(disposition, 'name');
    if (name === undefined) throw unreadable('a part has no name');
    const filename = parameter(disposition, 'filename');
    if (filename !== undefined) {
      form.files.set(name, {
        start,
        end,
        filename: Buffer.from(filename, 'latin1').toString('utf8'),
        contentType: header('content-type') ?? 'application/octet-stream',
      });
    } else {
      if (end - start > MAX_FIELD_BYTES) throw invalid(`'${name}' is too long.`, name);
      // Repeated fields (`timestamp_granularities[]`) keep every value, comma-separated.
      const value = body.toString('utf8', start, end);
      const earlier = form.fields.get(name);
      form.fields.set(name, earlier === undefined ? value : `${earlier},${value}`);
      form.spans.set(name, { start, end });
    }
    at = end + next.length;
  }
}

/** The body with one field's value replaced: one copy, only when a channel renames the model. */
export function withField(body: Buffer, span: Span, value: string): Buffer {
  return Buffer.concat([body.subarray(0, span.start), Buffer.from(value), body.subarray(span.end)]);
}
