import { Injectable } from '@nestjs/common';
import { type ChannelProvider, type ProviderSettings } from '@switchyard/contracts';
import { ChannelStatus, PrismaService } from '@switchyard/db';
import { ROUTER_ACTOR } from './actor.js';
import { AuditRepository } from './audit.repository.js';
import { type Db } from './db.js';

// The router's view of the channel tables: what it routes over, and the automatic status
// changes it may make. The router moves a key or a channel only between `enabled` and
// `auto_disabled`, never out of or into `disabled` (an administrator's decision). Like an
// administrator's change, each move bumps the channel's version (a key belongs to its
// channel's version) and is audited, here with the router as actor, in one transaction.

export interface StoredKey {
  id: number;
  secretCiphertext: string;
  status: ChannelStatus;
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
}

export interface StoredChannel {
  id: number;
  name: string;
  kind: 'single' | 'aggregated';
  provider: ChannelProvider;
  settings: ProviderSettings;
  baseUrl: string;
  models: string[];
  modelMapping: Record<string, string>;
  priority: number;
  weight: number;
  groups: string[];
  firstByteTimeoutMs: number | null;
  status: ChannelStatus;
  keys: StoredKey[];
}

function asMapping(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

const SETTING_NAMES = ['anthropicVersion', 'apiVersion', 'region'] as const;

function asSettings(value: unknown): ProviderSettings {
  const settings: ProviderSettings = {};
  if (typeof value !== 'object' || value === null) return settings;
  for (const name of SETTING_NAMES) {
    const setting = (value as Record<string, unknown>)[name];
    if (typeof setting === 'string') settings[name] = setting;
  }
  return settings;
}

@Injectable()
export class ChannelStore {
  constructor(
    private readonly prisma: PrismaService,
    private readonly audit: AuditRepository,
  ) {}

  /**
   * Every channel an administrator has not disabled, with its keys and their effective
   * limits; or only the one given, when it is such a channel.
   */
  async loadRoutable(channelId?: number): Promise<StoredChannel[]> {
    const rows = await this.prisma.channel.findMany({
      where: {
        status: { not: ChannelStatus.disabled },
        ...(channelId !== undefined ? { id: channelId } : {}),
      },
      include: {
        keys: { where: { status: { not: ChannelStatus.disabled } }, orderBy: { id: 'asc' } },
      },
      orderBy: { id: 'asc' },
    });
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      kind: row.kind,
      provider: row.provider,
      settings: asSettings(row.providerSettings),
      baseUrl: row.baseUrl,
      models: row.models,
      modelMapping: asMapping(row.modelMapping),
      priority: row.priority,
      weight: row.weight,
      groups: row.groups,
      firstByteTimeoutMs: row.firstByteTimeoutMs,
      status: row.status,
      keys: row.keys.map((key) => ({
        id: key.id,
        secretCiphertext: key.secretCiphertext,
        status: key.status,
        rpm: key.rpmLimit ?? row.rpmLimit,
        tpm: key.tpmLimit ?? row.tpmLimit,
        concurrency: key.concurrencyLimit ?? row.concurrencyLimit,
      })),
    }));
  }

  /**
   * Disables a banned key, and its channel once no key is left. Returns false when the key
   * was not enabled (already handled, or an administrator's decision).
   */
  async autoDisableKey(keyId: number, reason: string): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const now = new Date();
      const statusReason = reason.slice(0, 500);
      const changed = await tx.channelKey.updateMany({
        where: { id: keyId, status: ChannelStatus.enabled },
        data: { status: ChannelStatus.auto_disabled, statusReason, statusChangedAt: now },
      });
      if (changed.count === 0) return false;
      const channelId = await channelOf(tx, keyId);
      const usable = await tx.channelKey.count({
        where: { channelId, status: ChannelStatus.enabled },
      });
      const channelDisabled =
        usable === 0 &&
        (
          await tx.channel.updateMany({
            where: { id: channelId, status: ChannelStatus.enabled },
            data: {
              status: ChannelStatus.auto_disabled,
              statusReason: 'every key was disabled automatically',
              statusChangedAt: now,
            },
          })
        ).count === 1;
      await bumpVersion(tx, channelId);
      await this.audit.append(
        {
          actor: ROUTER_ACTOR,
          action: 'channel.key_auto_disable',
          target: { type: 'channel_key', id: keyId },
          details: { channelId, reason: statusReason, channelDisabled },
        },
        tx,
      );
      return true;
    });
  }

  /** Re-enables a key the router disabled (never one an administrator disabled), and its channel. */
  async reEnableKey(keyId: number): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const now = new Date();
      const changed = await tx.channelKey.updateMany({
        where: { id: keyId, status: ChannelStatus.auto_disabled },
        data: { status: ChannelStatus.enabled, statusReason: null, statusChangedAt: now },
      });
      if (changed.count === 0) return false;
      const channelId = await channelOf(tx, keyId);
      const channelEnabled =
        (
          await tx.channel.updateMany({
            where: { id: channelId, status: ChannelStatus.auto_disabled },
            data: { status: ChannelStatus.enabled, statusReason: null, statusChangedAt: now },
          })
        ).count === 1;
      await bumpVersion(tx, channelId);
      await this.audit.append(
        {
          actor: ROUTER_ACTOR,
          action: 'channel.key_auto_enable',
          target: { type: 'channel_key', id: keyId },
          details: { channelId, channelEnabled },
        },
        tx,
      );
      return true;
    });
  }
}

async function channelOf(tx: Db, keyId: number): Promise<number> {
  const key = await tx.channelKey.findUniqueOrThrow({
    where: { id: keyId },
    select: { channelId: true },
  });
  return key.channelId;
}

/** An administrator editing at the version read before this change must read it again. */
async function bumpVersion(tx: Db, channelId: number): Promise<void> {
  await tx.channel.update({ where: { id: channelId }, data: { version: { increment: 1 } } });
}
