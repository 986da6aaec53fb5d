import { Inject, Injectable } from '@nestjs/common';
import { SQL_POOL, type SqlPool, type TokenStatus } from '@switchyard/db/sql';
import { quotaSpentSql } from '@switchyard/domain';

// Every read of the `Token` table the edge makes. Plain SQL rather than the Prisma client,
// as for every query of the edge (see libs/db/src/sql). Quotas are bigint, read as text:
// micro-dollars fit a JavaScript number exactly up to some nine billion dollars.

export interface TokenRow {
  id: number;
  keyHash: string;
  status: TokenStatus;
  expiresAt: Date | null;
  quotaSpent: boolean;
  hasQuota: boolean;
  quota: string | null;
  models: string[];
  allowIps: string[];
  group: string;
  rateLimit: number | null;
}

const FIND_BY_HASH = `
  SELECT id, "keyHash", status, "expiresAt", models, "allowIps", "group", "rateLimit",
         quota::text AS quota,
         ${quotaSpentSql()} AS "quotaSpent",
         quota IS NOT NULL AS "hasQuota"
    FROM "Token"
   WHERE "keyHash" = $1`;

const USED_QUOTAS = `SELECT id, "usedQuota"::text AS used FROM "Token" WHERE id = ANY($1::int[])`;

@Injectable()
export class TokensRepository {
  constructor(@Inject(SQL_POOL) private readonly pool: SqlPool) {}

  async findByHash(keyHash: string): Promise<TokenRow | undefined> {
    return (await this.pool.query<TokenRow>(FIND_BY_HASH, [keyHash])).rows[0];
  }

  /** What each token has spent as committed by metering, by id (absent: no such token). */
  async usedQuotas(ids: number[]): Promise<Map<number, number>> {
    const { rows } = await this.pool.query<{ id: number; used: string }>(USED_QUOTAS, [ids]);
    return new Map(rows.map((row) => [row.id, Number(row.used)]));
  }
}
