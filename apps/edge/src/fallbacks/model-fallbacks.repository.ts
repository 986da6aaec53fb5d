import { Inject, Injectable } from '@nestjs/common';
import { SQL_POOL, type SqlPool } from '@switchyard/db/sql';

const LIST_FALLBACKS = `SELECT model, fallbacks, "contextWindow", "contentPolicy" FROM "ModelFallback"`;

export interface FallbackLists {
  /** Tried in order when every channel of the model failed before the first byte, or none could take it. */
  fallbacks: string[];
  /** Tried instead when an upstream answered that the request exceeds the context window. */
  contextWindow: string[];
  /** Tried instead when an upstream refused the request under its content policy. */
  contentPolicy: string[];
}

/** Every model's fallback lists as stored (plain SQL: the edge runs without Prisma). */
@Injectable()
export class ModelFallbacksRepository {
  constructor(@Inject(SQL_POOL) private readonly pool: SqlPool) {}

  async list(): Promise<({ model: string } & FallbackLists)[]> {
    return (await this.pool.query<{ model: string } & FallbackLists>(LIST_FALLBACKS)).rows;
  }
}
