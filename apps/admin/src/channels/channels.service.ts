import { Injectable } from '@nestjs/common';
import { ApiError, type ChannelProvider } from '@switchyard/contracts';
import { isAwsKeyPair } from '@switchyard/providers';
import { type ChannelKey, type Prisma } from '@switchyard/db';
import {
  ChannelsRepository,
  type AuditDetails,
  type ChannelFields,
  type ChannelWithKeys,
  type SealedKey,
} from '@switchyard/gateway-store';
import { isWildcard } from '@switchyard/domain';
import { registerSecret } from '@switchyard/observability';
import { SecretCipher, SecretCipherError, lastFour, sha256Hex } from '@switchyard/security';
import { AuditService } from '../audit/audit.service.js';
import { type Actor } from '../common/actor.js';
import { type Db } from '../common/db.js';
import { skipTake, type Page } from '@switchyard/service';
import { normalizeBaseUrl } from '../common/validators.js';
import { ChangeEvents } from '../events/change-events.js';
import { ChannelTester } from './channel-tester.js';
import {
  type ChannelKeyResponse,
  type ChannelResponse,
  type ChannelTestResult,
  type CreateChannelDto,
  type DisableChannelDto,
  type LimitsDto,
  type ListChannelsQuery,
  type TestChannelDto,
  type UpdateChannelDto,
  type UpdateChannelKeyDto,
  type UpstreamModelsDto,
  type UpstreamModelsResult,
} from './channels.dto.js';

const DEFAULT_GROUPS = ['default'];

/** The result of a pass that re-encrypts every upstream key under the current secret key. */
export interface ResealReport {
  keys: number;
  resealed: number;
}

@Injectable()
export class ChannelsService {
  constructor(
    private readonly channels: ChannelsRepository,
    private readonly cipher: SecretCipher,
    private readonly tester: ChannelTester,
    private readonly audit: AuditService,
    private readonly events: ChangeEvents,
  ) {}

  async list(query: ListChannelsQuery): Promise<Page<ChannelResponse>> {
    const { rows, total } = await this.channels.list(
      {
        ...(query.status ? { status: query.status } : {}),
        ...(query.model ? { model: query.model } : {}),
        ...(query.group ? { group: query.group } : {}),
        ...(query.kind ? { kind: query.kind } : {}),
        ...(query.name ? { name: query.name } : {}),
      },
      skipTake(query),
    );
    return { items: rows.map(toChannelResponse), total };
  }

  async get(id: number): Promise<ChannelResponse> {
    return toChannelResponse(await this.existing(id));
  }

  async create(actor: Actor, dto: CreateChannelDto): Promise<ChannelResponse> {
    const channel = await this.channels.transaction((db) => this.insert(db, actor, dto));
    await this.events.channelChanged(channel.id, 'created');
    return toChannelResponse(channel);
  }

  /** Creates every channel or none; subscribers get one event for the batch. */
  async import(actor: Actor, dtos: CreateChannelDto[]): Promise<Page<ChannelResponse>> {
    const created = await this.channels.transaction(async (db) => {
      const channels: ChannelWithKeys[] = [];
      for (const dto of dtos) channels.push(await this.insert(db, actor, dto, 'channel.import'));
      return channels;
    });
    if (created.length > 0) await this.events.channelChanged(undefined, 'created');
    return { items: created.map(toChannelResponse), total: created.length };
  }

  /**
   * Creates the demo channel only when no channel exists yet (first start, local launcher).
   * Null when there already was one.
   */
  async createIfNoneExists(actor: Actor, dto: CreateChannelDto): Promise<ChannelResponse | null> {
    const channel = await this.channels.whenNoChannelExists((db) => this.insert(db, actor, dto));
    if (!channel) return null;
    await this.events.channelChanged(channel.id, 'created');
    return toChannelResponse(channel);
  }

  async update(actor: Actor, id: number, dto: UpdateChannelDto): Promise<ChannelResponse> {
    const channel = await this.channels.transaction(async (db) => {
      const current = await this.existing(id, db);
      assertVersion(current.version, dto.version);
      // A provider's key format and settings hold for the channel as it will be.
      const provider = dto.provider ?? current.provider;
      if (provider === 'bedrock')
        assertProviderKeys(
          provider,
          dto.providerSettings ?? mappingOf(current.providerSettings),
          dto.keys ?? current.keys.map((key) => this.unseal(key)),
          'keys',
        );
      const fields = this.fieldsToUpdate(dto);
      if (!(await this.channels.updateAtVersion(db, id, dto.version, fields))) {
        throw versionConflict();
      }
      let keyChanges: AuditDetails = {};
      if (dto.keys !== undefined) keyChanges = await this.replaceKeys(db, current, dto.keys);
      await this.audit.record(
        {
          actor,
          action: 'channel.update',
          target: { type: 'channel', id },
          details: { changed: changedFields(dto), ...keyChanges },
        },
        db,
      );
      return this.existing(id, db);
    });
    await this.events.channelChanged(id, 'updated');
    return toChannelResponse(channel);
  }

  async enable(actor: Actor, id: number): Promise<ChannelResponse> {
    return this.setStatus(actor, id, 'enabled', null);
  }

  async disable(actor: Actor, id: number, dto: DisableChannelDto): Promise<ChannelResponse> {
    return this.setStatus(actor, id, 'disabled', dto.reason?.trim() || `disabled by ${actor.name}`);
  }

  async delete(actor: Actor, id: number): Promise<void> {
    await this.channels.transaction(async (db) => {
      const current = await this.existing(id, db);
      await this.channels.delete(db, id);
      await this.audit.record(
        {
          actor,
          action: 'channel.delete',
          target: { type: 'channel', id },
          details: { name: current.name, keys: current.keys.length },
        },
        db,
      );
    });
    await this.events.channelChanged(id, 'deleted');
  }

  async updateKey(
    actor: Actor,
    channelId: number,
    keyId: number,
    dto: UpdateChannelKeyDto,
  ): Promise<ChannelKeyResponse> {
    const key = await this.channels.transaction(async (db) => {
      const channel = await this.existing(channelId, db);
      if (dto.version !== undefined) assertVersion(channel.version, dto.version);
      const key = keyOf(channel, keyId);
      const fields: Prisma.ChannelKeyUncheckedUpdateInput = {
        ...limitFields(dto.limits),
        ...(dto.status !== undefined && dto.status !== key.status
          ? {
              status: dto.status,
              statusReason: dto.status === 'disabled' ? `disabled by ${actor.name}` : null,
              statusChangedAt: new Date(),
            }
          : {}),
      };
      await this.channels.updateKey(db, keyId, fields);
      // The channel as a whole changed: concurrent editors must re-read it.
      if (!(await this.channels.updateAtVersion(db, channelId, channel.version, {}))) {
        throw versionConflict();
      }
      await this.audit.record(
        {
          actor,
          action: 'channel.key_update',
          target: { type: 'channel_key', id: keyId },
          details: {
            channelId,
            lastFour: key.lastFour,
            changed: changedFields(dto),
            ...(dto.status !== undefined ? { status: dto.status } : {}),
          },
        },
        db,
      );
      return keyOf(await this.existing(channelId, db), keyId);
    });
    await this.events.channelChanged(channelId, 'updated');
    return toKeyResponse(key);
  }

  /** One minimal chat request through the channel, with one of its keys. */
  async test(actor: Actor, id: number, dto: TestChannelDto): Promise<ChannelTestResult> {
    const channel = await this.existing(id);
    const key =
      dto.keyId !== undefined
        ? keyOf(channel, dto.keyId)
        : (channel.keys.find((k) => k.status === 'enabled') ?? channel.keys[0]);
    if (!key) throw new ApiError('conflict', `Channel ${id} has no key to test with`);
    const model = dto.model ?? channel.models.find((m) => !isWildcard(m));
    if (model === undefined) {
      const message = 'model is required: the channel lists only wildcard entries';
      throw new ApiError('validation_failed', message, [{ field: 'model', message }]);
    }
    const upstreamModel = mappingOf(channel.modelMapping)[model] ?? model;
    const outcome = await this.tester.probe({
      baseUrl: channel.baseUrl,
      secret: this.unseal(key),
      model: upstreamModel,
      provider: channel.provider,
      settings: mappingOf(channel.providerSettings),
    });
    await this.audit.record({
      actor,
      action: 'channel.test',
      target: { type: 'channel', id },
      details: {
        keyId: key.id,
        model,
        ok: outcome.ok,
        status: outcome.status,
        ...(outcome.ok ? {} : { error: outcome.error.code }),
      },
    });
    return { ...outcome, model, upstreamModel, keyId: key.id };
  }

  /** The models an upstream offers, for a channel not saved yet. */
  upstreamModels(dto: UpstreamModelsDto): Promise<UpstreamModelsResult> {
    const provider = dto.provider ?? 'openai';
    const settings = { ...dto.providerSettings };
    assertProviderKeys(provider, settings, [dto.key], 'key');
    return this.tester.listModels({
      baseUrl: normalizeBaseUrl(dto.baseUrl),
      secret: dto.key,
      provider,
      settings,
    });
  }

  /** The models a saved channel's upstream offers, asked with its first enabled key. */
  async upstreamModelsOf(id: number): Promise<UpstreamModelsResult> {
    const channel = await this.existing(id);
    const key = channel.keys.find((k) => k.status === 'enabled') ?? channel.keys[0];
    if (!key) throw new ApiError('conflict', `Channel ${id} has no key to ask with`);
    return this.tester.listModels({
      baseUrl: channel.baseUrl,
      secret: this.unseal(key),
      provider: channel.provider,
      settings: mappingOf(channel.providerSettings),
    });
  }

  /** Re-encrypts every upstream key under the first of `SECRET_KEYS` (key rotation). */
  async resealAll(actor: Actor): Promise<ResealReport> {
    const report: ResealReport = { keys: 0, resealed: 0 };
    let afterId = 0;
    for (;;) {
      const batch = await this.channels.keysAfter(afterId, 500);
      if (batch.length === 0) break;
      for (const key of batch) {
        report.keys += 1;
        const resealed = this.cipher.reseal(key.secretCiphertext);
        if (
          resealed !== null &&
          (await this.channels.resealKey(key.id, key.secretCiphertext, resealed))
        ) {
          report.resealed += 1;
        }
      }
      afterId = batch[batch.length - 1]?.id ?? afterId;
    }
    await this.audit.record({
      actor,
      action: 'channel.reseal',
      target: { type: 'channel_key' },
      details: { keys: report.keys, resealed: report.resealed, keyId: this.cipher.currentKeyId },
    });
    if (report.resealed > 0) await this.events.channelChanged(undefined, 'updated');
    return report;
  }

  private async insert(
    db: Db,
    actor: Actor,
    dto: CreateChannelDto,
    action = 'channel.create',
  ): Promise<ChannelWithKeys> {
    assertProviderKeys(dto.provider ?? 'openai', { ...dto.providerSettings }, dto.keys, 'keys');
    const fields: ChannelFields = {
      name: dto.name.trim(),
      kind: dto.kind,
      provider: dto.provider ?? 'openai',
      providerSettings: { ...dto.providerSettings },
      baseUrl: normalizeBaseUrl(dto.baseUrl),
      models: dto.models,
      modelMapping: dto.modelMapping ?? {},
      priority: dto.priority ?? 0,
      weight: dto.weight ?? 1,
      groups: dto.groups ?? DEFAULT_GROUPS,
      rpmLimit: dto.limits?.rpm ?? null,
      tpmLimit: dto.limits?.tpm ?? null,
      concurrencyLimit: dto.limits?.concurrency ?? null,
      firstByteTimeoutMs: dto.firstByteTimeoutMs ?? null,
    };
    const channel = await this.channels.create(
      db,
      fields,
      dto.keys.map((k) => this.seal(k)),
    );
    await this.audit.record(
      {
        actor,
        action,
        target: { type: 'channel', id: channel.id },
        details: {
          name: channel.name,
          kind: channel.kind,
          provider: channel.provider,
          baseUrl: channel.baseUrl,
          models: channel.models,
          groups: channel.groups,
          priority: channel.priority,
          weight: channel.weight,
          keysAdded: channel.keys.length,
        },
      },
      db,
    );
    return channel;
  }

  private fieldsToUpdate(dto: UpdateChannelDto): Prisma.ChannelUncheckedUpdateManyInput {
    return {
      ...(dto.name !== undefined ? { name: dto.name.trim() } : {}),
      ...(dto.kind !== undefined ? { kind: dto.kind } : {}),
      ...(dto.provider !== undefined ? { provider: dto.provider } : {}),
      ...(dto.providerSettings !== undefined
        ? { providerSettings: { ...dto.providerSettings } }
        : {}),
      ...(dto.baseUrl !== undefined ? { baseUrl: normalizeBaseUrl(dto.baseUrl) } : {}),
      ...(dto.models !== undefined ? { models: dto.models } : {}),
      ...(dto.modelMapping !== undefined ? { modelMapping: dto.modelMapping } : {}),
      ...(dto.priority !== undefined ? { priority: dto.priority } : {}),
      ...(dto.weight !== undefined ? { weight: dto.weight } : {}),
      ...(dto.groups !== undefined ? { groups: dto.groups } : {}),
      ...limitFields(dto.limits),
      ...(dto.firstByteTimeoutMs !== undefined
        ? { firstByteTimeoutMs: dto.firstByteTimeoutMs }
        : {}),
    };
  }

  /** Keeps the rows of keys that stay (so their statistics survive), drops and adds the rest. */
  private async replaceKeys(
    db: Db,
    current: ChannelWithKeys,
    secrets: string[],
  ): Promise<AuditDetails> {
    const wanted = new Map(secrets.map((secret) => [sha256Hex(secret), secret]));
    const remove = current.keys.filter((key) => !wanted.has(key.fingerprint));
    const kept = new Set(current.keys.map((key) => key.fingerprint));
    const add = [...wanted].filter(([fingerprint]) => !kept.has(fingerprint));
    await this.channels.replaceKeys(
      db,
      current.id,
      remove.map((key) => key.id),
      add.map(([, secret]) => this.seal(secret)),
    );
    return {
      keysAdded: add.length,
      keysRemoved: remove.map((key) => key.lastFour),
      keysKept: current.keys.length - remove.length,
    };
  }

  private async setStatus(
    actor: Actor,
    id: number,
    status: 'enabled' | 'disabled',
    reason: string | null,
  ): Promise<ChannelResponse> {
    const { channel, changed } = await this.channels.transaction(async (db) => {
      const current = await this.existing(id, db);
      if (current.status === status) return { channel: current, changed: false };
      const fields = { status, statusReason: reason, statusChangedAt: new Date() };
      if (!(await this.channels.updateAtVersion(db, id, current.version, fields))) {
        throw versionConflict();
      }
      await this.audit.record(
        {
          actor,
          action: status === 'enabled' ? 'channel.enable' : 'channel.disable',
          target: { type: 'channel', id },
          details: { from: current.status, to: status, ...(reason ? { reason } : {}) },
        },
        db,
      );
      return { channel: await this.existing(id, db), changed: true };
    });
    if (changed) await this.events.channelChanged(id, 'updated');
    return toChannelResponse(channel);
  }

  private unseal(key: ChannelKey): string {
    try {
      const secret = this.cipher.open(key.secretCiphertext);
      // An upstream's answer to a test may quote it: no log line of this process shows it.
      registerSecret(secret);
      return secret;
    } catch (error) {
      if (!(error instanceof SecretCipherError)) throw error;
      throw new ApiError(
        'conflict',
        `Key ${key.id} cannot be decrypted with the configured SECRET_KEYS (${error.message}); enter the key again`,
      );
    }
  }

  private seal(secret: string): SealedKey {
    return {
      secretCiphertext: this.cipher.seal(secret),
      fingerprint: sha256Hex(secret),
      lastFour: lastFour(secret),
    };
  }

  private async existing(id: number, db?: Db): Promise<ChannelWithKeys> {
    const channel = await this.channels.findById(id, db);
    if (!channel) throw new ApiError('not_found', `No channel with id ${id}`);
    return channel;
  }
}

function assertVersion(current: number, given: number): void {
  if (current !== given) throw versionConflict(current);
}

function versionConflict(current?: number): ApiError {
  return new ApiError(
    'version_conflict',
    current === undefined
      ? 'The channel was changed by someone else meanwhile; read it again and retry'
      : `The channel is at version ${current}; read it again and retry`,
  );
}

function keyOf(channel: ChannelWithKeys, keyId: number): ChannelKey {
  const key = channel.keys.find((k) => k.id === keyId);
  if (!key) throw new ApiError('not_found', `Channel ${channel.id} has no key with id ${keyId}`);
  return key;
}

/** Only the limits present in the body change; null clears one. */
function limitFields(limits: LimitsDto | undefined) {
  return {
    ...(limits?.rpm !== undefined ? { rpmLimit: limits.rpm } : {}),
    ...(limits?.tpm !== undefined ? { tpmLimit: limits.tpm } : {}),
    ...(limits?.concurrency !== undefined ? { concurrencyLimit: limits.concurrency } : {}),
  };
}

/** Names of the fields a body sets, never their values (keys are secrets). */
function changedFields(dto: object): string[] {
  return Object.entries(dto)
    .filter(([field, value]) => value !== undefined && field !== 'version')
    .map(([field]) => field);
}

function mappingOf(value: Prisma.JsonValue): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

function toKeyResponse(key: ChannelKey): ChannelKeyResponse {
  return {
    id: key.id,
    lastFour: key.lastFour,
    status: key.status,
    statusReason: key.statusReason,
    limits: { rpm: key.rpmLimit, tpm: key.tpmLimit, concurrency: key.concurrencyLimit },
    usedQuota: Number(key.usedQuota),
    requestCount: Number(key.requestCount),
    createdAt: key.createdAt,
  };
}

export function toChannelResponse(channel: ChannelWithKeys): ChannelResponse {
  return {
    id: channel.id,
    name: channel.name,
    kind: channel.kind,
    provider: channel.provider,
    providerSettings: mappingOf(channel.providerSettings),
    baseUrl: channel.baseUrl,
    keys: channel.keys.map(toKeyResponse),
    models: channel.models,
    modelMapping: mappingOf(channel.modelMapping),
    priority: channel.priority,
    weight: channel.weight,
    groups: channel.groups,
    limits: {
      rpm: channel.rpmLimit,
      tpm: channel.tpmLimit,
      concurrency: channel.concurrencyLimit,
    },
    firstByteTimeoutMs: channel.firstByteTimeoutMs,
    status: channel.status,
    statusReason: channel.statusReason,
    statusChangedAt: channel.statusChangedAt,
    usedQuota: Number(channel.usedQuota),
    requestCount: Number(channel.requestCount),
    version: channel.version,
    createdAt: channel.createdAt,
    updatedAt: channel.updatedAt,
  };
}

/**
 * What a provider needs of a channel beyond the DTO's shape: a bedrock channel signs with an
 * AWS key pair for a region (docs/providers.md). Keys are never quoted back, only counted.
 */
function assertProviderKeys(
  provider: ChannelProvider,
  settings: { region?: string },
  keys: string[],
  field: 'keys' | 'key',
): void {
  if (provider !== 'bedrock') return;
  const fields: { field: string; message: string }[] = [];
  if (!settings.region)
    fields.push({
      field: 'providerSettings.region',
      message: 'a bedrock channel needs providerSettings.region, like us-east-1',
    });
  const malformed = keys.filter((key) => !isAwsKeyPair(key)).length;
  if (malformed > 0)
    fields.push({
      field,
      message: `a bedrock key is ACCESS_KEY_ID:SECRET_ACCESS_KEY, optionally followed by :SESSION_TOKEN (${malformed} of ${keys.length} ${malformed === 1 ? 'is' : 'are'} not)`,
    });
  if (fields.length > 0)
    throw new ApiError('validation_failed', fields.map((f) => f.message).join('; '), fields);
}
