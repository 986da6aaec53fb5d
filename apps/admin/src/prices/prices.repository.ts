import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService, type ModelPrice } from '@switchyard/db';
import { modelMatchSql } from '@switchyard/domain';
import { type Db } from '../common/db.js';

export interface UnpricedRow {
  model: string;
  requests: bigint;
  cost: bigint;
  lastUsedOn: string;
}

export interface PriceRow {
  model: string;
  inputPrice: number;
  outputPrice: number;
  cachedInputPrice?: number | null;
}

@Injectable()
export class PricesRepository {
  constructor(private readonly prisma: PrismaService) {}

  transaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, { timeout: 60_000 });
  }

  async listByModel(page: {
    skip: number;
    take: number;
  }): Promise<{ rows: ModelPrice[]; total: number }> {
    const [rows, total] = await Promise.all([
      this.prisma.modelPrice.findMany({ orderBy: { model: 'asc' }, ...page }),
      this.prisma.modelPrice.count(),
    ]);
    return { rows, total };
  }

  /**
   * Models used in the last `days` days (daily roll-ups) that no price entry matches, as
   * metering prices them (docs/architecture.md, "Model patterns"); most used first. A gateway serves a few
   * hundred models at most, so the page is cut here rather than counted twice in SQL.
   */
  async listUnpriced(
    days: number,
    page: { skip: number; take: number },
  ): Promise<{ rows: UnpricedRow[]; total: number }> {
    const rows = await this.prisma.$queryRaw<UnpricedRow[]>`
      SELECT u.model,
             sum(u.requests - u.failures)::bigint AS requests,
             sum(u.cost)::bigint AS cost,
             to_char(max(u.day), 'YYYY-MM-DD') AS "lastUsedOn"
        FROM "UsageDaily" u
       WHERE u.day > (now() AT TIME ZONE 'UTC')::date - ${days}::int
         AND NOT EXISTS (
               SELECT 1 FROM "ModelPrice" p
                WHERE ${Prisma.raw(modelMatchSql('p.model', 'u.model'))})
       GROUP BY u.model
      HAVING sum(u.requests - u.failures) > 0
       ORDER BY requests DESC, u.model ASC`;
    return { rows: rows.slice(page.skip, page.skip + page.take), total: rows.length };
  }

  async upsert(db: Db, price: PriceRow): Promise<void> {
    await db.modelPrice.upsert({
      where: { model: price.model },
      create: { ...price, cachedInputPrice: price.cachedInputPrice ?? null },
      update: {
        inputPrice: price.inputPrice,
        outputPrice: price.outputPrice,
        cachedInputPrice: price.cachedInputPrice ?? null,
      },
    });
  }

  /** Removes every price whose model is not in `keep`; returns how many went. */
  async deleteAllExcept(db: Db, keep: string[]): Promise<number> {
    const { count } = await db.modelPrice.deleteMany({ where: { model: { notIn: keep } } });
    return count;
  }

  async delete(db: Db, model: string): Promise<ModelPrice | null> {
    const existing = await db.modelPrice.findUnique({ where: { model } });
    if (!existing) return null;
    await db.modelPrice.delete({ where: { model } });
    return existing;
  }
}
