import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { type Prisma, type Token } from '@switchyard/db';
import { budgetSubject, tokenStatusAfterEdit } from '@switchyard/domain';
import { TokensRepository, type AuditDetails } from '@switchyard/gateway-store';
import { generateGatewayToken, lastFour, sha256Hex } from '@switchyard/security';
import { AuditService } from '../audit/audit.service.js';
import { type Actor } from '../common/actor.js';
import { type Db } from '../common/db.js';
import { skipTake, type Page } from '@switchyard/service';
import { fieldError } from '../common/validators.js';
import { ChangeEvents } from '../events/change-events.js';
import {
  BUNDLE_PURPOSES,
  type CreateTokenBundleDto,
  type CreateTokenDto,
  type CreatedTokenResponse,
  type ListTokensQuery,
  type TokenBundleResponse,
  type TokenResponse,
  type TokenStatusView,
  type UpdateTokenDto,
} from './tokens.dto.js';
import { shareTeam } from '../teams/team-locks.repository.js';

/**
 * Gateway tokens. The full value exists only in the creation response; the database holds
 * its SHA-256 (what the edges look tokens up by) and its last four characters.
 */
@Injectable()
export class TokensService {
  constructor(
    private readonly tokens: TokensRepository,
    private readonly audit: AuditService,
    private readonly events: ChangeEvents,
  ) {}

  async list(query: ListTokensQuery): Promise<Page<TokenResponse>> {
    const now = new Date();
    const { rows, total } = await this.tokens.list(
      {
        ...(query.status ? { status: query.status } : {}),
        ...(query.group ? { group: query.group } : {}),
        ...(query.name ? { name: query.name } : {}),
      },
      skipTake(query),
      now,
    );
    return { items: rows.map((row) => toTokenResponse(row, now)), total };
  }

  async get(id: number): Promise<TokenResponse> {
    return toTokenResponse(await this.existing(id), new Date());
  }

  async create(actor: Actor, dto: CreateTokenDto): Promise<CreatedTokenResponse> {
    const expiresAt = futureDate(dto.expiresAt);
    const created = await this.tokens.transaction((db) =>
      this.insert(db, actor, dto.name.trim(), dto, expiresAt),
    );
    await this.events.tokenChanged(created.token.id, created.token.keyHash, 'created');
    return { ...toTokenResponse(created.token, new Date()), key: created.key };
  }

  /**
   * The bundle of docs/specification.md, "Tokens" (chat, image model, image service), in
   * one transaction.
   */
  async createBundle(actor: Actor, dto: CreateTokenBundleDto): Promise<TokenBundleResponse> {
    const expiresAt = futureDate(dto.expiresAt);
    const created = await this.tokens.transaction(async (db) => {
      const made: Partial<Record<keyof typeof BUNDLE_PURPOSES, { token: Token; key: string }>> = {};
      for (const [purpose, suffix] of Object.entries(BUNDLE_PURPOSES)) {
        made[purpose as keyof typeof BUNDLE_PURPOSES] = await this.insert(
          db,
          actor,
          `${dto.name.trim()}${suffix}`,
          dto,
          expiresAt,
        );
      }
      return made as Record<keyof typeof BUNDLE_PURPOSES, { token: Token; key: string }>;
    });
    const now = new Date();
    for (const { token } of Object.values(created)) {
      await this.events.tokenChanged(token.id, token.keyHash, 'created');
    }
    const view = ({ token, key }: { token: Token; key: string }) => ({
      ...toTokenResponse(token, now),
      key,
    });
    return {
      chat: view(created.chat),
      imageModel: view(created.imageModel),
      imageService: view(created.imageService),
    };
  }

  async update(actor: Actor, id: number, dto: UpdateTokenDto): Promise<TokenResponse> {
    const expiresAt = dto.expiresAt === undefined ? undefined : futureDate(dto.expiresAt);
    const token = await this.tokens.transaction(async (db) => {
      const current = await this.existing(id, db);
      if (current.version !== dto.version) throw versionConflict(current.version);
      const teamChanges = dto.teamId !== undefined && dto.teamId !== current.teamId;
      if (teamChanges) {
        // A member's token is theirs within its team: their member budget and the team's
        // policy were checked against that team (docs/teams.md, "Member tokens").
        if (current.ownerId !== null) {
          throw fieldError('teamId', "teamId of a member's token cannot change; revoke it instead");
        }
        await lockTeam(db, dto.teamId!);
      }
      const quota =
        dto.quota === undefined ? current.quota : dto.quota === null ? null : BigInt(dto.quota);
      const data: Prisma.TokenUncheckedUpdateManyInput = {
        ...(dto.name !== undefined ? { name: dto.name.trim() } : {}),
        ...(expiresAt !== undefined ? { expiresAt } : {}),
        ...(dto.quota !== undefined ? { quota } : {}),
        ...(dto.models !== undefined ? { models: dto.models } : {}),
        ...(dto.allowIps !== undefined ? { allowIps: dto.allowIps } : {}),
        ...(dto.group !== undefined ? { group: dto.group } : {}),
        ...(dto.rateLimit !== undefined ? { rateLimit: dto.rateLimit } : {}),
        ...(teamChanges ? { teamId: dto.teamId } : {}),
        status: tokenStatusAfterEdit(current, dto.enabled, quota),
      };
      if (!(await this.tokens.updateAtVersion(db, id, dto.version, data))) {
        throw versionConflict();
      }
      if (teamChanges) {
        // The token's own budget is listed and deleted with the team it is in.
        await db.budget.updateMany({
          where: { subject: budgetSubject('token', id) },
          data: { teamId: dto.teamId! },
        });
      }
      const updated = await this.existing(id, db);
      await this.audit.record(
        {
          actor,
          action: 'token.update',
          target: { type: 'token', id },
          details: changes(current, updated),
        },
        db,
      );
      return updated;
    });
    await this.events.tokenChanged(token.id, token.keyHash, 'updated');
    return toTokenResponse(token, new Date());
  }

  async delete(actor: Actor, id: number): Promise<void> {
    const token = await this.tokens.transaction(async (db) => {
      const current = await this.existing(id, db);
      await this.tokens.delete(db, id);
      // Its budget has nothing left to cover (docs/teams.md, "Budgets").
      await db.budget.deleteMany({ where: { subject: budgetSubject('token', id) } });
      await this.audit.record(
        {
          actor,
          action: 'token.delete',
          target: { type: 'token', id },
          details: { name: current.name, lastFour: current.lastFour },
        },
        db,
      );
      return current;
    });
    await this.events.tokenChanged(token.id, token.keyHash, 'deleted');
  }

  private async insert(
    db: Db,
    actor: Actor,
    name: string,
    dto: CreateTokenDto,
    expiresAt: Date | null,
  ): Promise<{ token: Token; key: string }> {
    const teamId = dto.teamId ?? null;
    await lockTeam(db, teamId);
    const key = generateGatewayToken();
    const token = await this.tokens.create(db, {
      name,
      keyHash: sha256Hex(key),
      lastFour: lastFour(key),
      expiresAt,
      quota: dto.quota === null ? null : BigInt(dto.quota),
      models: dto.models ?? [],
      allowIps: dto.allowIps ?? [],
      group: dto.group ?? 'default',
      rateLimit: dto.rateLimit ?? null,
      teamId,
    });
    await this.audit.record(
      {
        actor,
        action: 'token.create',
        target: { type: 'token', id: token.id },
        details: {
          name,
          lastFour: token.lastFour,
          expiresAt: expiresAt?.toISOString() ?? null,
          quota: dto.quota,
          models: token.models,
          allowIps: token.allowIps,
          group: token.group,
          rateLimit: token.rateLimit,
          teamId,
        },
      },
      db,
    );
    return { token, key };
  }

  private async existing(id: number, db?: Db): Promise<Token> {
    const token = await this.tokens.findById(id, db);
    if (!token) throw new ApiError('not_found', `No token with id ${id}`);
    return token;
  }
}

/**
 * Holds the team a token is put in FOR SHARE until the transaction ends, so the team cannot be
 * deleted between this check and the token's insert (docs/teams.md, "Teams"); null is no team.
 */
async function lockTeam(db: Db, teamId: number | null): Promise<void> {
  if (teamId === null) return;
  const team = await shareTeam(db, teamId);
  if (!team) throw fieldError('teamId', `teamId ${teamId} is not a team`);
}

/** A validated ISO date that must lie ahead; null stays null (never expires). */
function futureDate(value: string | null): Date | null {
  if (value === null) return null;
  const date = new Date(value);
  if (!(date.getTime() > Date.now())) {
    const message = 'expiresAt must be in the future (disable a token to stop it now)';
    throw new ApiError('validation_failed', message, [{ field: 'expiresAt', message }]);
  }
  return date;
}

function versionConflict(current?: number): ApiError {
  return new ApiError(
    'version_conflict',
    current === undefined
      ? 'The token was changed by someone else meanwhile; read it again and retry'
      : `The token is at version ${current}; read it again and retry`,
  );
}

function viewStatus(token: Token, now: Date): TokenStatusView {
  if (token.status === 'enabled' && token.expiresAt !== null && token.expiresAt <= now) {
    return 'expired';
  }
  return token.status;
}

/** What an update changed, field by field (a token has no secret left to leak). */
function changes(before: Token, after: Token): AuditDetails {
  const view = (token: Token) => ({
    name: token.name,
    status: token.status,
    expiresAt: token.expiresAt?.toISOString() ?? null,
    quota: token.quota === null ? null : Number(token.quota),
    models: token.models.join(','),
    allowIps: token.allowIps.join(','),
    group: token.group,
    rateLimit: token.rateLimit,
    teamId: token.teamId,
  });
  const from = view(before);
  const to = view(after);
  const changed: Record<string, { from: string | number | null; to: string | number | null }> = {};
  for (const field of Object.keys(from) as (keyof typeof from)[]) {
    if (from[field] !== to[field]) changed[field] = { from: from[field], to: to[field] };
  }
  return changed;
}

export function toTokenResponse(token: Token, now: Date): TokenResponse {
  const quota = token.quota === null ? null : Number(token.quota);
  const usedQuota = Number(token.usedQuota);
  return {
    id: token.id,
    name: token.name,
    lastFour: token.lastFour,
    status: viewStatus(token, now),
    expiresAt: token.expiresAt,
    quota,
    usedQuota,
    remainingQuota: quota === null ? null : Math.max(0, quota - usedQuota),
    models: token.models,
    allowIps: token.allowIps,
    group: token.group,
    rateLimit: token.rateLimit,
    teamId: token.teamId,
    ownerId: token.ownerId,
    version: token.version,
    createdAt: token.createdAt,
    updatedAt: token.updatedAt,
  };
}
