import { Injectable } from '@nestjs/common';
import {
  Prisma,
  PrismaService,
  type Channel,
  type ChannelKey,
  type ChannelStatus,
} from '@switchyard/db';
import { modelMatchSql } from '@switchyard/domain';
import { type Db } from './db.js';

export type ChannelWithKeys = Channel & { keys: ChannelKey[] };

/** A key ready to store: the secret sealed, its fingerprint and last four characters. */
export interface SealedKey {
  secretCiphertext: string;
  fingerprint: string;
  lastFour: string;
}

export interface ChannelFilter {
  status?: ChannelStatus;
  model?: string;
  group?: string;
  kind?: Channel['kind'];
  name?: string;
}

export type ChannelFields = Omit<
  Prisma.ChannelUncheckedCreateInput,
  'id' | 'keys' | 'usageLogs' | 'version' | 'createdAt' | 'updatedAt'
>;

const WITH_KEYS = { keys: { orderBy: { id: 'asc' } } } satisfies Prisma.ChannelInclude;

// Serialises the "create only when there is no channel yet" of the demo seed.
const FIRST_CHANNEL_LOCK = 0x5359_4348; // "SYCH"

@Injectable()
export class ChannelsRepository {
  constructor(private readonly prisma: PrismaService) {}

  transaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, { timeout: 30_000 });
  }

  /** Runs `work` only when no channel exists, with concurrent callers serialised. */
  whenNoChannelExists<T>(work: (db: Db) => Promise<T>): Promise<T | null> {
    return this.prisma.$transaction(async (db) => {
      await db.$executeRaw`SELECT pg_advisory_xact_lock(${FIRST_CHANNEL_LOCK}::bigint)`;
      if ((await db.channel.count()) > 0) return null;
      return work(db);
    });
  }

  create(db: Db, fields: ChannelFields, keys: SealedKey[]): Promise<ChannelWithKeys> {
    return db.channel.create({
      data: { ...fields, keys: { create: keys } },
      include: WITH_KEYS,
    });
  }

  findById(id: number, db: Db = this.prisma): Promise<ChannelWithKeys | null> {
    return db.channel.findUnique({ where: { id }, include: WITH_KEYS });
  }

  async list(
    filter: ChannelFilter,
    page: { skip: number; take: number },
  ): Promise<{ rows: ChannelWithKeys[]; total: number }> {
    const where: Prisma.ChannelWhereInput = {
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.kind ? { kind: filter.kind } : {}),
      ...(filter.group ? { groups: { has: filter.group } } : {}),
      ...(filter.name ? { name: { contains: filter.name, mode: 'insensitive' } } : {}),
      ...(filter.model ? { id: { in: await this.idsServingModel(filter.model) } } : {}),
    };
    const [rows, total] = await Promise.all([
      this.prisma.channel.findMany({
        where,
        include: WITH_KEYS,
        orderBy: [{ priority: 'desc' }, { id: 'asc' }],
        ...page,
      }),
      this.prisma.channel.count({ where }),
    ]);
    return { rows, total };
  }

  /** Channels with an entry matching the model, in the one pattern language. */
  private async idsServingModel(model: string): Promise<number[]> {
    const rows = await this.prisma.$queryRaw<{ id: number }[]>`
      WITH wanted AS (SELECT ${model}::text AS model)
      SELECT id FROM "Channel", wanted
      WHERE EXISTS (
        SELECT 1 FROM unnest(models) AS entry
        WHERE ${Prisma.raw(modelMatchSql('entry', 'wanted.model'))}
      )`;
    return rows.map((row) => row.id);
  }

  /** Applies the change only if the row is still at `version`; false when it is not. */
  async updateAtVersion(
    db: Db,
    id: number,
    version: number,
    fields: Prisma.ChannelUncheckedUpdateManyInput,
  ): Promise<boolean> {
    const { count } = await db.channel.updateMany({
      where: { id, version },
      data: { ...fields, version: { increment: 1 } },
    });
    return count === 1;
  }

  async replaceKeys(
    db: Db,
    channelId: number,
    removeIds: number[],
    add: SealedKey[],
  ): Promise<void> {
    if (removeIds.length > 0) {
      await db.channelKey.deleteMany({ where: { channelId, id: { in: removeIds } } });
    }
    if (add.length > 0) {
      await db.channelKey.createMany({ data: add.map((key) => ({ ...key, channelId })) });
    }
  }

  async updateKey(
    db: Db,
    keyId: number,
    fields: Prisma.ChannelKeyUncheckedUpdateInput,
  ): Promise<void> {
    await db.channelKey.update({ where: { id: keyId }, data: fields });
  }

  /** Deletes the channel and its keys; false when it did not exist. */
  async delete(db: Db, id: number): Promise<boolean> {
    const { count } = await db.channel.deleteMany({ where: { id } });
    return count === 1;
  }

  /** Keys in id order after `afterId`, for a pass over all of them. */
  keysAfter(afterId: number, take: number): Promise<Pick<ChannelKey, 'id' | 'secretCiphertext'>[]> {
    return this.prisma.channelKey.findMany({
      where: { id: { gt: afterId } },
      select: { id: true, secretCiphertext: true },
      orderBy: { id: 'asc' },
      take,
    });
  }

  /** Replaces a sealed secret, only if it is still the one that was read. */
  async resealKey(id: number, from: string, to: string): Promise<boolean> {
    const { count } = await this.prisma.channelKey.updateMany({
      where: { id, secretCiphertext: from },
      data: { secretCiphertext: to },
    });
    return count === 1;
  }
}
