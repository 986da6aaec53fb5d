import { Injectable, Logger } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { isRecordNotFound, type ApiKeyRecord } from '@switchyard/db';
import { lastFour, SecretCipher } from '@switchyard/security';
import { wholeList } from '@switchyard/service';
import { type PurposeName } from '../common/platform.js';
import { EditionsService } from '../editions/editions.service.js';
import { InvalidAddressError, normalizeAddress, type NormalizedAddress } from './address.js';
import {
  type ApiKeyPageResponse,
  type ApiKeyResponse,
  type CreateApiKeyDto,
  type UpdateApiKeyDto,
} from './api-keys.dto.js';
import { ApiKeysRepository, type ApiKeyFields } from './api-keys.repository.js';

function toResponse(record: ApiKeyRecord): ApiKeyResponse {
  return {
    id: record.id,
    platform: record.platform,
    address: record.address,
    addressNormalized: record.addressNormalized,
    keyLastFour: record.keyLastFour,
    purpose: record.purpose,
    enabled: record.enabled,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

function parseAddress(address: string): NormalizedAddress {
  try {
    return normalizeAddress(address);
  } catch (error) {
    if (error instanceof InvalidAddressError) {
      throw new ApiError('validation_failed', `Invalid address: ${error.message}`, [
        { field: 'address', message: error.message },
      ]);
    }
    throw error;
  }
}

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger(ApiKeysService.name);

  constructor(
    private readonly records: ApiKeysRepository,
    private readonly editions: EditionsService,
    private readonly cipher: SecretCipher,
  ) {}

  async list(purpose?: PurposeName): Promise<ApiKeyPageResponse> {
    return wholeList((await this.records.listRecords(purpose)).map(toResponse));
  }

  async get(id: number): Promise<ApiKeyResponse> {
    return toResponse(await this.find(id));
  }

  async create(dto: CreateApiKeyDto): Promise<ApiKeyResponse> {
    const { address, normalized } = parseAddress(dto.address);
    await this.editions.assertAddressAllowed(address);
    const record = await this.records.createRecord({
      platform: dto.platform ?? 'openai',
      address,
      addressNormalized: normalized,
      keyCiphertext: this.cipher.seal(dto.key),
      keyLastFour: lastFour(dto.key),
      purpose: dto.purpose ?? 'chat',
      enabled: dto.enabled ?? true,
    });
    this.logger.log({
      message: 'API key record added',
      recordId: record.id,
      address,
      purpose: record.purpose,
    });
    return toResponse(record);
  }

  async update(id: number, dto: UpdateApiKeyDto): Promise<ApiKeyResponse> {
    const current = await this.find(id);
    const fields: ApiKeyFields = {};
    if (dto.platform !== undefined) fields.platform = dto.platform;
    if (dto.purpose !== undefined) fields.purpose = dto.purpose;
    if (dto.enabled !== undefined) fields.enabled = dto.enabled;
    if (dto.key !== undefined) {
      fields.keyCiphertext = this.cipher.seal(dto.key);
      fields.keyLastFour = lastFour(dto.key);
    }
    if (dto.address !== undefined) {
      const { address, normalized } = parseAddress(dto.address);
      fields.address = address;
      fields.addressNormalized = normalized;
    }
    // Disabling is always possible; a record that will be used must have an allowed address.
    const address = fields.address ?? current.address;
    const enabled = fields.enabled ?? current.enabled;
    if (enabled || address !== current.address) await this.editions.assertAddressAllowed(address);
    try {
      const record = await this.records.updateRecord(id, fields);
      this.logger.log({
        message: 'API key record changed',
        recordId: id,
        fields: Object.keys(fields).filter((field) => field !== 'keyCiphertext'),
      });
      return toResponse(record);
    } catch (error) {
      if (isRecordNotFound(error))
        throw new ApiError('not_found', `No API key record with id ${id}`);
      throw error;
    }
  }

  async remove(id: number): Promise<void> {
    try {
      await this.records.deleteRecord(id);
      this.logger.log({ message: 'API key record deleted', recordId: id });
    } catch (error) {
      if (isRecordNotFound(error))
        throw new ApiError('not_found', `No API key record with id ${id}`);
      throw error;
    }
  }

  /**
   * Adds the record, or brings the record with the same address and purpose up to date
   * (key, enabled): the local launcher runs this at every start.
   */
  async ensure(
    dto: Required<Pick<CreateApiKeyDto, 'address' | 'key' | 'purpose'>>,
  ): Promise<{ record: ApiKeyResponse; created: boolean }> {
    const { address } = parseAddress(dto.address);
    const existing = await this.records.findByAddressAndPurpose(address, dto.purpose);
    if (!existing) return { record: await this.create(dto), created: true };
    return {
      record: await this.update(existing.id, { key: dto.key, enabled: true }),
      created: false,
    };
  }

  private async find(id: number): Promise<ApiKeyRecord> {
    const record = await this.records.findRecord(id);
    if (!record) throw new ApiError('not_found', `No API key record with id ${id}`);
    return record;
  }
}
