import { Injectable } from '@nestjs/common';
import { PrismaService, type ModelFallback } from '@switchyard/db';
import { type Db } from '../common/db.js';

export interface FallbackLists {
  fallbacks: string[];
  contextWindow: string[];
  contentPolicy: string[];
}

@Injectable()
export class ModelFallbacksRepository {
  constructor(private readonly prisma: PrismaService) {}

  transaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  async list(page: {
    skip: number;
    take: number;
  }): Promise<{ rows: ModelFallback[]; total: number }> {
    const [rows, total] = await Promise.all([
      this.prisma.modelFallback.findMany({ orderBy: { model: 'asc' }, ...page }),
      this.prisma.modelFallback.count(),
    ]);
    return { rows, total };
  }

  /** Every model's lists: a gateway has a few hundred models at most. */
  all(db: Db): Promise<ModelFallback[]> {
    return db.modelFallback.findMany();
  }

  /** The model lists of every channel, whatever its status (a disabled one may come back). */
  async channelModels(db: Db): Promise<string[][]> {
    const rows = await db.channel.findMany({ select: { models: true } });
    return rows.map((row) => row.models);
  }

  upsert(db: Db, model: string, lists: FallbackLists): Promise<ModelFallback> {
    return db.modelFallback.upsert({
      where: { model },
      create: { model, ...lists },
      update: lists,
    });
  }

  async delete(db: Db, model: string): Promise<ModelFallback | null> {
    const existing = await db.modelFallback.findUnique({ where: { model } });
    if (!existing) return null;
    await db.modelFallback.delete({ where: { model } });
    return existing;
  }
}
