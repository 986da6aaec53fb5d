import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type FastifyInstance } from 'fastify';

// Multipart bodies (the audio uploads), read by the WHATWG `FormData` parser that Node's
// fetch implementation ships: a real, maintained parser, and no dependency to add. The
// form replaces the request's body, so the request log shows its fields and, for each
// file, its name, type and size rather than its bytes.

export interface UploadedFile {
  name: string;
  type: string;
  bytes: Buffer;
}

export class UploadForm {
  constructor(
    readonly fields: ReadonlyMap<string, string>,
    readonly files: ReadonlyMap<string, UploadedFile>,
  ) {}

  field(name: string): string | undefined {
    return this.fields.get(name);
  }

  toJSON(): Record<string, unknown> {
    return {
      ...Object.fromEntries(this.fields),
      ...Object.fromEntries(
        [...this.files].map(([name, file]) => [
          name,
          { name: file.name, type: file.type, size: file.bytes.length },
        ]),
      ),
    };
  }
}

/** A body that says it is multipart but is not; the route answers it with its 400. */
export class UnreadableForm {
  constructor(readonly reason: string) {}

  toJSON(): Record<string, unknown> {
    return { unreadable: this.reason };
  }
}

export async function readUploadForm(
  body: Buffer,
  contentType: string,
): Promise<UploadForm | UnreadableForm> {
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch (error) {
    return new UnreadableForm((error as Error).message);
  }
  const fields = new Map<string, string>();
  const files = new Map<string, UploadedFile>();
  for (const [name, value] of form) {
    // Repeated fields (`timestamp_granularities[]`) keep their values, comma-separated.
    if (typeof value === 'string')
      fields.set(name, fields.has(name) ? `${fields.get(name)},${value}` : value);
    else
      files.set(name, {
        name: value.name,
        type: value.type,
        bytes: Buffer.from(await value.arrayBuffer()),
      });
  }
  return new UploadForm(fields, files);
}

/** Teaches the app's Fastify to read `multipart/form-data` bodies into an `UploadForm`. */
@Injectable()
export class UploadForms implements OnModuleInit {
  constructor(private readonly adapter: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapter.httpAdapter.getInstance<FastifyInstance>();
    fastify.addContentTypeParser(
      'multipart/form-data',
      { parseAs: 'buffer' },
      async (request: { headers: Record<string, unknown> }, body: Buffer) =>
        readUploadForm(body, String(request.headers['content-type'])),
    );
  }
}
