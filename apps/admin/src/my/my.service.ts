import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { PrismaService, type Team } from '@switchyard/db';
import { budgetSubject, coveredByList } from '@switchyard/domain';
import { TokensRepository } from '@switchyard/gateway-store';
import { generateGatewayToken, lastFour, sha256Hex } from '@switchyard/security';
import { skipTake, type Page } from '@switchyard/service';
import { AuditService } from '../audit/audit.service.js';
import { toBalanceEntryResponse } from '../balances/balances.service.js';
import { type BalanceEntryResponse } from '../balances/balances.dto.js';
import { BudgetsService } from '../budgets/budgets.service.js';
import { type Actor } from '../common/actor.js';
import { type PageQuery } from '../common/pagination.js';
import { ChangeEvents } from '../events/change-events.js';
import { RedemptionService } from '../redemption/redemption.service.js';
import { type RedeemedResponse } from '../redemption/redemption.dto.js';
import { TeamsService, toTeamResponse } from '../teams/teams.service.js';
import { type CreatedTokenResponse, type TokenResponse } from '../tokens/tokens.dto.js';
import { toTokenResponse } from '../tokens/tokens.service.js';
import { type UsageLogPage } from '../usage/usage.dto.js';
import { UsageService } from '../usage/usage.service.js';
import { type CreateMyTokenDto, type MyTeamResponse, type MyUsageQuery } from './my.dto.js';
import { shareTeam } from '../teams/team-locks.repository.js';

const DAY_MS = 86_400_000;

/**
 * A member's own view (docs/teams.md, "Members"). Every method starts from the member's
 * membership of the team named in the path: a team they are not in is 404, like one that
 * does not exist, and within a team they reach only the tokens they made.
 */
@Injectable()
export class MyService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly teams: TeamsService,
    private readonly budgets: BudgetsService,
    private readonly tokens: TokensRepository,
    private readonly usage: UsageService,
    private readonly redemption: RedemptionService,
    private readonly audit: AuditService,
    private readonly events: ChangeEvents,
  ) {}

  listTeams(actor: Actor) {
    return this.teams.ofMember(actor.id!);
  }

  async team(actor: Actor, teamId: number): Promise<MyTeamResponse> {
    const team = await this.teams.asMember(teamId, actor.id!);
    return {
      ...toTeamResponse(team),
      budgets: await this.budgets.coveringMember(teamId, actor.id!),
    };
  }

  async listTokens(actor: Actor, teamId: number, query: PageQuery): Promise<Page<TokenResponse>> {
    await this.teams.asMember(teamId, actor.id!);
    const where = { teamId, ownerId: actor.id! };
    const [rows, total] = await Promise.all([
      this.prisma.token.findMany({ where, orderBy: { id: 'desc' }, ...skipTake(query) }),
      this.prisma.token.count({ where }),
    ]);
    const now = new Date();
    return { items: rows.map((row) => toTokenResponse(row, now)), total };
  }

  async createToken(
    actor: Actor,
    teamId: number,
    dto: CreateMyTokenDto,
  ): Promise<CreatedTokenResponse> {
    await this.teams.asMember(teamId, actor.id!);
    const key = generateGatewayToken();
    const token = await this.tokens.transaction(async (db) => {
      // FOR SHARE: the team cannot be deleted, nor its policy changed, while this token is
      // checked against it and made (docs/teams.md, "Member tokens").
      const team = await shareTeam(db, teamId);
      if (!team) throw new ApiError('not_found', `No team with id ${teamId}`);
      const policy = withinPolicy(team, dto, new Date());
      const created = await this.tokens.create(db, {
        name: dto.name.trim(),
        keyHash: sha256Hex(key),
        lastFour: lastFour(key),
        expiresAt: policy.expiresAt,
        quota: null,
        models: policy.models,
        rateLimit: policy.rateLimit,
        teamId,
        ownerId: actor.id,
      });
      await this.audit.record(
        {
          actor,
          action: 'token.create',
          target: { type: 'token', id: created.id },
          details: {
            name: created.name,
            lastFour: created.lastFour,
            teamId,
            ownerId: actor.id,
            expiresAt: created.expiresAt?.toISOString() ?? null,
            models: created.models,
            rateLimit: created.rateLimit,
          },
        },
        db,
      );
      return created;
    });
    await this.events.tokenChanged(token.id, token.keyHash, 'created');
    return { ...toTokenResponse(token, new Date()), key };
  }

  async revokeToken(actor: Actor, teamId: number, tokenId: number): Promise<void> {
    await this.teams.asMember(teamId, actor.id!);
    const token = await this.tokens.transaction(async (db) => {
      const current = await db.token.findFirst({
        where: { id: tokenId, teamId, ownerId: actor.id! },
      });
      if (!current) throw new ApiError('not_found', `No token with id ${tokenId}`);
      await this.tokens.delete(db, tokenId);
      await this.budgets.clearSubjects(db, [budgetSubject('token', tokenId)]);
      await this.audit.record(
        {
          actor,
          action: 'token.delete',
          target: { type: 'token', id: tokenId },
          details: { name: current.name, lastFour: current.lastFour, teamId },
        },
        db,
      );
      return current;
    });
    await this.events.tokenChanged(token.id, token.keyHash, 'deleted');
  }

  async usageOf(actor: Actor, teamId: number, query: MyUsageQuery): Promise<UsageLogPage> {
    await this.teams.asMember(teamId, actor.id!);
    return this.usage.logs(query, { teamId, ownerId: actor.id! });
  }

  async ledger(
    actor: Actor,
    teamId: number,
    query: PageQuery,
  ): Promise<Page<BalanceEntryResponse>> {
    await this.teams.asMember(teamId, actor.id!);
    const [rows, total] = await Promise.all([
      this.prisma.balanceEntry.findMany({
        where: { teamId },
        orderBy: { id: 'desc' },
        ...skipTake(query),
      }),
      this.prisma.balanceEntry.count({ where: { teamId } }),
    ]);
    return { items: rows.map(toBalanceEntryResponse), total };
  }

  async redeem(actor: Actor, teamId: number, code: string): Promise<RedeemedResponse> {
    const team = await this.teams.asMember(teamId, actor.id!);
    if (team.billing !== 'balance') {
      throw new ApiError(
        'conflict',
        `Team ${team.name} spends against budgets, not a balance: codes are redeemed for balance teams`,
      );
    }
    return this.redemption.redeem(actor, teamId, code, actor.clientIp ?? 'unknown');
  }
}

/**
 * A member's token within the team's policy (docs/teams.md, "Member tokens"): models a
 * subset of the team's, a rate limit no higher, an expiry no later than `maxTokenDays`.
 * What the body leaves out takes the team's value. A 403 names the field that goes beyond.
 */
export function withinPolicy(
  team: Team,
  dto: CreateMyTokenDto,
  now: Date,
): { models: string[]; rateLimit: number | null; expiresAt: Date | null } {
  const beyond = (field: string, message: string) =>
    new ApiError('forbidden', message, [{ field, message }]);

  const models = dto.models ?? team.models;
  if (team.models.length > 0) {
    if (models.length === 0) {
      throw beyond(
        'models',
        `models must name models: team ${team.name} allows only ${team.models.join(', ')}`,
      );
    }
    const outside = models.filter((m) => !coveredByList(team.models, m));
    if (outside.length > 0) {
      throw beyond(
        'models',
        `models ${outside.join(', ')} go beyond what team ${team.name} allows (${team.models.join(', ')})`,
      );
    }
  }

  const rateLimit = dto.rateLimit === undefined ? team.rateLimit : dto.rateLimit;
  if (team.rateLimit !== null && (rateLimit === null || rateLimit > team.rateLimit)) {
    throw beyond(
      'rateLimit',
      `rateLimit must be at most ${team.rateLimit} requests per minute, the team's cap`,
    );
  }

  const latest =
    team.maxTokenDays === null ? null : new Date(now.getTime() + team.maxTokenDays * DAY_MS);
  let expiresAt: Date | null;
  if (dto.expiresAt === undefined) expiresAt = latest;
  else if (dto.expiresAt === null) expiresAt = null;
  else {
    expiresAt = new Date(dto.expiresAt);
    if (expiresAt.getTime() <= now.getTime()) {
      const message = 'expiresAt must be in the future';
      throw new ApiError('validation_failed', message, [{ field: 'expiresAt', message }]);
    }
  }
  if (latest !== null && (expiresAt === null || expiresAt > latest)) {
    throw beyond(
      'expiresAt',
      `expiresAt must be no later than ${latest.toISOString()}: team ${team.name} allows tokens of at most ${team.maxTokenDays} day(s)`,
    );
  }
  return { models, rateLimit, expiresAt };
}
