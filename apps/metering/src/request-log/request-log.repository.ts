import { Inject, Injectable } from '@nestjs/common';
import { type RequestLogEntry } from '@switchyard/contracts';
import { SQL_POOL, type SqlPool } from '@switchyard/db/sql';

// The `RequestLog` table (docs/operations.md, "Request log"): entries in, old ones out.
// Plain SQL, as for usage (usage.repository.ts): one statement per job of entries.

/** One INSERT for a job's entries; an entry delivered twice is stored once. */
const INSERT_ENTRIES = `
  INSERT INTO "RequestLog" (
    "requestId", "tokenId", "endpoint", "model", "status", "traceId", "requestBody",
    "responseBody", "requestTruncated", "responseTruncated", "requestedAt")
  SELECT e->>'requestId', (e->>'tokenId')::int, e->>'endpoint', e->>'model',
         (e->>'status')::int, e->>'traceId', e->>'requestBody', e->>'responseBody',
         (e->>'requestTruncated')::boolean, (e->>'responseTruncated')::boolean,
         to_timestamp((e->>'requestedAt')::bigint / 1000.0)
    FROM jsonb_array_elements($1::jsonb) AS e
  ON CONFLICT ("requestId") DO NOTHING`;

/** A chunk at a time, so no statement holds many locks or a long transaction. */
const DELETE_BEFORE = `
  DELETE FROM "RequestLog" WHERE "requestId" IN (
    SELECT "requestId" FROM "RequestLog" WHERE "requestedAt" < $1 LIMIT $2)`;

@Injectable()
export class RequestLogRepository {
  constructor(@Inject(SQL_POOL) private readonly pool: SqlPool) {}

  /** How many were new (a redelivered job inserts nothing). */
  async insert(entries: readonly RequestLogEntry[]): Promise<number> {
    const result = await this.pool.query({
      name: 'request-log.insert',
      text: INSERT_ENTRIES,
      values: [JSON.stringify(entries)],
    });
    return result.rowCount ?? 0;
  }

  async deleteBefore(cutoff: Date, chunk: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const result = await this.pool.query(DELETE_BEFORE, [cutoff, chunk]);
      const count = result.rowCount ?? 0;
      deleted += count;
      if (count < chunk) return deleted;
    }
  }
}
