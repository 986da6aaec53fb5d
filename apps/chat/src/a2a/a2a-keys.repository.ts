import { Injectable } from '@nestjs/common';
import { PrismaService, type A2aKey, type ChatUser } from '@switchyard/db';

@Injectable()
export class A2aKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(fields: {
    userId: number;
    name: string;
    keyHash: string;
    lastFour: string;
  }): Promise<A2aKey> {
    return this.prisma.a2aKey.create({ data: fields });
  }

  listOwned(userId: number): Promise<A2aKey[]> {
    return this.prisma.a2aKey.findMany({ where: { userId }, orderBy: { id: 'asc' } });
  }

  /** The key, revoked now or before; null when the user has no such key. */
  async revokeOwned(id: number, userId: number): Promise<A2aKey | null> {
    await this.prisma.a2aKey.updateMany({
      where: { id, userId, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    return this.prisma.a2aKey.findFirst({ where: { id, userId } });
  }

  findByHash(keyHash: string): Promise<(A2aKey & { user: ChatUser }) | null> {
    return this.prisma.a2aKey.findUnique({ where: { keyHash }, include: { user: true } });
  }

  async touch(id: number): Promise<void> {
    await this.prisma.a2aKey.update({ where: { id }, data: { lastUsedAt: new Date() } });
  }
}
