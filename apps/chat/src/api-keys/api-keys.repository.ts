import { Injectable } from '@nestjs/common';
import { PrismaService, type ApiKeyRecord, type ModelPurpose, type Platform } from '@switchyard/db';

export interface ApiKeyFields {
  platform?: Platform;
  address?: string;
  addressNormalized?: boolean;
  keyCiphertext?: string;
  keyLastFour?: string;
  purpose?: ModelPurpose;
  enabled?: boolean;
}

export type NewApiKeyRecord = Required<Omit<ApiKeyFields, 'platform'>> & { platform: Platform };

@Injectable()
export class ApiKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  listRecords(purpose?: ModelPurpose): Promise<ApiKeyRecord[]> {
    return this.prisma.apiKeyRecord.findMany({
      where: purpose ? { purpose } : {},
      orderBy: { id: 'asc' },
    });
  }

  /** The records that take part in round-robin for `purpose`, in a stable order. */
  listEnabled(purpose: ModelPurpose): Promise<ApiKeyRecord[]> {
    return this.prisma.apiKeyRecord.findMany({
      where: { purpose, enabled: true },
      orderBy: { id: 'asc' },
    });
  }

  findRecord(id: number): Promise<ApiKeyRecord | null> {
    return this.prisma.apiKeyRecord.findUnique({ where: { id } });
  }

  findByAddressAndPurpose(address: string, purpose: ModelPurpose): Promise<ApiKeyRecord | null> {
    return this.prisma.apiKeyRecord.findFirst({
      where: { address, purpose },
      orderBy: { id: 'asc' },
    });
  }

  createRecord(record: NewApiKeyRecord): Promise<ApiKeyRecord> {
    return this.prisma.apiKeyRecord.create({ data: record });
  }

  /** Throws Prisma's record-not-found. */
  updateRecord(id: number, fields: ApiKeyFields): Promise<ApiKeyRecord> {
    return this.prisma.apiKeyRecord.update({ where: { id }, data: fields });
  }

  /** Throws Prisma's record-not-found. */
  async deleteRecord(id: number): Promise<void> {
    await this.prisma.apiKeyRecord.delete({ where: { id } });
  }
}
