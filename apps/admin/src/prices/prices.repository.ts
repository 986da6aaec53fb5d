import { Injectable } from '@nestjs/common';
import { PrismaService, type ModelPrice } from '@switchyard/db';
import { type Db } from '../common/db.js';

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
