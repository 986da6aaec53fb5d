import { Injectable } from '@nestjs/common';
import { PrismaService, type Prisma } from '@switchyard/db';

/** Settings an administrator changes at run time, one `Setting` row a key. */
@Injectable()
export class ChatSettingsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The stored values of these keys; a key never saved is missing. */
  async read(keys: string[]): Promise<Map<string, Prisma.JsonValue>> {
    const rows = await this.prisma.setting.findMany({ where: { key: { in: keys } } });
    return new Map(rows.map((row) => [row.key, row.value]));
  }

  /** Saves the values together. */
  async save(values: Record<string, Prisma.InputJsonValue>): Promise<void> {
    await this.prisma.$transaction(
      Object.entries(values).map(([key, value]) =>
        this.prisma.setting.upsert({ where: { key }, create: { key, value }, update: { value } }),
      ),
    );
  }
}
