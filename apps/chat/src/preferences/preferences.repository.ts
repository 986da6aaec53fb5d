import { Injectable } from '@nestjs/common';
import { PrismaService } from '@switchyard/db';

export interface StoredPreferences {
  preferredModel: string | null;
  customAssistants: string[];
}

const SELECTED = { preferredModel: true, customAssistants: true } as const;

@Injectable()
export class PreferencesRepository {
  constructor(private readonly prisma: PrismaService) {}

  findForUser(userId: number): Promise<StoredPreferences | null> {
    return this.prisma.chatUser.findUnique({ where: { id: userId }, select: SELECTED });
  }

  /** Throws Prisma's record-not-found when the user is gone. */
  setPreferredModel(userId: number, model: string | null): Promise<StoredPreferences> {
    return this.prisma.chatUser.update({
      where: { id: userId },
      data: { preferredModel: model },
      select: SELECTED,
    });
  }

  /** Adds the name unless the user has it already, in one statement (two tabs may race). */
  async addCustomAssistant(userId: number, model: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE "ChatUser" SET "customAssistants" = array_append("customAssistants", ${model})
      WHERE id = ${userId} AND NOT (${model} = ANY("customAssistants"))`;
  }
}
