import { Injectable } from '@nestjs/common';
import {
  PrismaService,
  type ChatModel,
  type ModelPurpose,
  type Platform,
  type ToolMode,
} from '@switchyard/db';

export interface ModelFields {
  platform?: Platform;
  name?: string;
  purpose?: ModelPurpose;
  open?: boolean;
  toolMode?: ToolMode;
  contextTokens?: number | null;
  vision?: boolean;
  creditsPerCall?: number;
  creditsPer1kInput?: number;
  creditsPer1kOutput?: number;
}

@Injectable()
export class ModelsRepository {
  constructor(private readonly prisma: PrismaService) {}

  listAll(): Promise<ChatModel[]> {
    return this.prisma.chatModel.findMany({ orderBy: { name: 'asc' } });
  }

  /** Models open to everyone, or named in `permissions` (docs/specification.md, "Model access"). */
  listOpenOrPermitted(permissions: string[]): Promise<ChatModel[]> {
    return this.prisma.chatModel.findMany({
      where: { OR: [{ open: true }, { name: { in: permissions } }] },
      orderBy: { name: 'asc' },
    });
  }

  /**
   * The models the user's plan includes, when the plan is enabled (docs/credits.md,
   * "Models included").
   */
  async includedByPlan(userId: number): Promise<string[]> {
    const subscription = await this.prisma.userCreditPlan.findUnique({
      where: { userId },
      select: { plan: { select: { models: true, disabled: true } } },
    });
    return subscription && !subscription.plan.disabled ? subscription.plan.models : [];
  }

  findByName(name: string): Promise<ChatModel | null> {
    return this.prisma.chatModel.findUnique({ where: { name } });
  }

  async existingNames(names: string[]): Promise<string[]> {
    const rows = await this.prisma.chatModel.findMany({
      where: { name: { in: names } },
      select: { name: true },
    });
    return rows.map((row) => row.name);
  }

  /** Throws Prisma's unique violation when the name is taken. */
  createModel(fields: ModelFields & { name: string }): Promise<ChatModel> {
    return this.prisma.chatModel.create({ data: fields });
  }

  /** Throws Prisma's record-not-found or unique violation. */
  updateModel(id: number, fields: ModelFields): Promise<ChatModel> {
    return this.prisma.chatModel.update({ where: { id }, data: fields });
  }

  /** Throws Prisma's record-not-found. */
  async deleteModel(id: number): Promise<void> {
    await this.prisma.chatModel.delete({ where: { id } });
  }
}
