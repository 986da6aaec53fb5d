import { Injectable } from '@nestjs/common';
import { PrismaService, type Prisma, type Token } from '@switchyard/db';
import { type Db } from './db.js';

/** A token's status as the admin lists it: `expired` is an enabled token past its expiry. */
export type TokenListStatus = 'enabled' | 'disabled' | 'exhausted' | 'expired';

export interface TokenFilter {
  status?: TokenListStatus;
  group?: string;
  name?: string;
}

@Injectable()
export class TokensRepository {
  constructor(private readonly prisma: PrismaService) {}

  transaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  create(db: Db, data: Prisma.TokenUncheckedCreateInput): Promise<Token> {
    return db.token.create({ data });
  }

  findById(id: number, db: Db = this.prisma): Promise<Token | null> {
    return db.token.findUnique({ where: { id } });
  }

  async list(
    filter: TokenFilter,
    page: { skip: number; take: number },
    now: Date,
  ): Promise<{ rows: Token[]; total: number }> {
    const where: Prisma.TokenWhereInput = {
      ...statusFilter(filter.status, now),
      ...(filter.group ? { group: filter.group } : {}),
      ...(filter.name ? { name: { contains: filter.name, mode: 'insensitive' } } : {}),
    };
    const [rows, total] = await Promise.all([
      this.prisma.token.findMany({ where, orderBy: { id: 'desc' }, ...page }),
      this.prisma.token.count({ where }),
    ]);
    return { rows, total };
  }

  /** Applies the change only if the row is still at `version`; false when it is not. */
  async updateAtVersion(
    db: Db,
    id: number,
    version: number,
    data: Prisma.TokenUncheckedUpdateManyInput,
  ): Promise<boolean> {
    const { count } = await db.token.updateMany({
      where: { id, version },
      data: { ...data, version: { increment: 1 } },
    });
    return count === 1;
  }

  /**
   * Turns the token's request log on or off (docs/operations.md, "Request log"), locking the
   * row so concurrent switches audit once each. Undefined when there is no such token.
   */
  async setRequestLog(
    db: Db,
    id: number,
    enabled: boolean,
  ): Promise<{ before: boolean; keyHash: string } | undefined> {
    const [current] = await db.$queryRaw<{ requestLog: boolean; keyHash: string }[]>`
      SELECT "requestLog", "keyHash" FROM "Token" WHERE id = ${id} FOR UPDATE`;
    if (!current) return undefined;
    await db.token.update({ where: { id }, data: { requestLog: enabled } });
    return { before: current.requestLog, keyHash: current.keyHash };
  }

  async delete(db: Db, id: number): Promise<void> {
    await db.token.delete({ where: { id } });
  }
}

function statusFilter(status: TokenListStatus | undefined, now: Date): Prisma.TokenWhereInput {
  switch (status) {
    case undefined:
      return {};
    case 'expired':
      return { status: 'enabled', expiresAt: { lte: now } };
    case 'enabled':
      return { status: 'enabled', OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] };
    default:
      return { status };
  }
}
