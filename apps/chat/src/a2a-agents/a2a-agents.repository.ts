import { Injectable } from '@nestjs/common';
import { PrismaService, type A2aAgent } from '@switchyard/db';

export interface A2aAgentFields {
  name?: string;
  cardUrl?: string;
  headersCiphertext?: string | null;
  headerNames?: string[];
  enabled?: boolean;
}

@Injectable()
export class A2aAgentsRepository {
  constructor(private readonly prisma: PrismaService) {}

  listAgents(): Promise<A2aAgent[]> {
    return this.prisma.a2aAgent.findMany({ orderBy: { id: 'asc' } });
  }

  listEnabled(): Promise<A2aAgent[]> {
    return this.prisma.a2aAgent.findMany({ where: { enabled: true }, orderBy: { id: 'asc' } });
  }

  async anyEnabled(): Promise<boolean> {
    return (await this.prisma.a2aAgent.count({ where: { enabled: true } })) > 0;
  }

  findAgent(id: number): Promise<A2aAgent | null> {
    return this.prisma.a2aAgent.findUnique({ where: { id } });
  }

  /** Throws Prisma's unique violation when the name is taken. */
  createAgent(fields: Required<A2aAgentFields>): Promise<A2aAgent> {
    return this.prisma.a2aAgent.create({ data: fields });
  }

  /** Throws Prisma's record-not-found or unique violation. */
  updateAgent(id: number, fields: A2aAgentFields): Promise<A2aAgent> {
    return this.prisma.a2aAgent.update({ where: { id }, data: fields });
  }

  /** Throws Prisma's record-not-found. */
  async deleteAgent(id: number): Promise<void> {
    await this.prisma.a2aAgent.delete({ where: { id } });
  }
}
