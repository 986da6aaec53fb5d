import { Injectable } from '@nestjs/common';
import { PrismaService, type McpServer } from '@switchyard/db';

export interface McpServerFields {
  name?: string;
  url?: string;
  headersCiphertext?: string | null;
  headerNames?: string[];
  enabled?: boolean;
}

@Injectable()
export class McpServersRepository {
  constructor(private readonly prisma: PrismaService) {}

  listServers(): Promise<McpServer[]> {
    return this.prisma.mcpServer.findMany({ orderBy: { id: 'asc' } });
  }

  listEnabled(): Promise<McpServer[]> {
    return this.prisma.mcpServer.findMany({ where: { enabled: true }, orderBy: { id: 'asc' } });
  }

  /** The enabled servers among `ids`, in id order. */
  listEnabledAmong(ids: number[]): Promise<McpServer[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.prisma.mcpServer.findMany({
      where: { id: { in: ids }, enabled: true },
      orderBy: { id: 'asc' },
    });
  }

  findServer(id: number): Promise<McpServer | null> {
    return this.prisma.mcpServer.findUnique({ where: { id } });
  }

  /** Throws Prisma's unique violation when the name is taken. */
  createServer(fields: Required<McpServerFields>): Promise<McpServer> {
    return this.prisma.mcpServer.create({ data: fields });
  }

  /** Throws Prisma's record-not-found or unique violation. */
  updateServer(id: number, fields: McpServerFields): Promise<McpServer> {
    return this.prisma.mcpServer.update({ where: { id }, data: fields });
  }

  /** Throws Prisma's record-not-found. */
  async deleteServer(id: number): Promise<void> {
    await this.prisma.mcpServer.delete({ where: { id } });
  }
}
