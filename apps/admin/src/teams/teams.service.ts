import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import {
  isUniqueViolation,
  PrismaService,
  type AdminUser,
  type Team,
  type TeamMember,
} from '@switchyard/db';
import { budgetSubject } from '@switchyard/domain';
import { skipTake, type Page } from '@switchyard/service';
import { AuditService } from '../audit/audit.service.js';
import { BudgetsService } from '../budgets/budgets.service.js';
import { type Actor } from '../common/actor.js';
import { type Db } from '../common/db.js';
import { type PageQuery } from '../common/pagination.js';
import { fieldError } from '../common/validators.js';
import { ChangeEvents } from '../events/change-events.js';
import { DEFAULT_PRICE_GROUP } from '../price-groups/price-groups.service.js';
import {
  type AddMemberDto,
  type CreateTeamDto,
  type TeamDetailResponse,
  type TeamResponse,
  type UpdateTeamDto,
} from './teams.dto.js';
import { lockTeamForUpdate } from './team-locks.repository.js';

type TeamWithMembers = Team & {
  members: (TeamMember & { user: Pick<AdminUser, 'username' | 'disabled'> })[];
  _count: { tokens: number };
};

const WITH_MEMBERS = {
  members: {
    include: { user: { select: { username: true, disabled: true } } },
    orderBy: { createdAt: 'asc' as const },
  },
  _count: { select: { tokens: true } },
};

/**
 * Teams (docs/teams.md): a policy their members' tokens stay within, members (accounts of
 * role `member`), budgets and, for `balance` teams, a prepaid balance. Administrators
 * manage them here; members see theirs through `api/my`.
 */
@Injectable()
export class TeamsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly events: ChangeEvents,
    private readonly budgets: BudgetsService,
  ) {}

  async list(query: PageQuery): Promise<Page<TeamResponse>> {
    const [rows, total] = await Promise.all([
      this.prisma.team.findMany({
        include: WITH_MEMBERS,
        orderBy: { name: 'asc' },
        ...skipTake(query),
      }),
      this.prisma.team.count(),
    ]);
    return { items: rows.map(toTeamResponse), total };
  }

  async detail(id: number): Promise<TeamDetailResponse> {
    const team = await this.existing(id);
    return { ...toTeamResponse(team), budgets: await this.budgets.ofTeam(id) };
  }

  /** The teams an account belongs to (a member's own view). */
  async ofMember(userId: number): Promise<TeamResponse[]> {
    const rows = await this.prisma.team.findMany({
      where: { members: { some: { userId } } },
      include: WITH_MEMBERS,
      orderBy: { name: 'asc' },
    });
    return rows.map(toTeamResponse);
  }

  /**
   * The team, if `userId` belongs to it. Otherwise 404, the same answer as for a team that
   * does not exist: a member learns nothing about other teams (docs/teams.md, "Members").
   */
  async asMember(teamId: number, userId: number): Promise<TeamWithMembers> {
    const team = await this.prisma.team.findFirst({
      where: { id: teamId, members: { some: { userId } } },
      include: WITH_MEMBERS,
    });
    if (!team) throw new ApiError('not_found', `No team with id ${teamId}`);
    return team;
  }

  async create(actor: Actor, dto: CreateTeamDto): Promise<TeamResponse> {
    await this.assertPriceGroup(dto.priceGroup);
    const team = await this.unique(dto.name, () =>
      this.prisma.$transaction(async (db) => {
        const created = await db.team.create({
          data: {
            name: dto.name.trim(),
            models: dto.models ?? [],
            rateLimit: dto.rateLimit ?? null,
            priceGroup: dto.priceGroup ?? DEFAULT_PRICE_GROUP,
            maxTokenDays: dto.maxTokenDays ?? null,
            billing: dto.billing ?? 'budget',
          },
          include: WITH_MEMBERS,
        });
        await this.audit.record(
          {
            actor,
            action: 'team.create',
            target: { type: 'team', id: created.id },
            details: policyOf(created),
          },
          db,
        );
        return created;
      }),
    );
    await this.events.teamChanged(team.id);
    return toTeamResponse(team);
  }

  async update(actor: Actor, id: number, dto: UpdateTeamDto): Promise<TeamResponse> {
    if (dto.priceGroup !== undefined) await this.assertPriceGroup(dto.priceGroup);
    for (const field of ['name', 'billing', 'priceGroup'] as const) {
      if (dto[field] === null) throw fieldError(field, `${field} cannot be null`);
    }
    const team = await this.unique(dto.name ?? '', () =>
      this.prisma.$transaction(async (db) => {
        const before = await this.existing(id, db);
        const updated = await db.team.update({
          where: { id },
          data: {
            ...(dto.name !== undefined ? { name: dto.name.trim() } : {}),
            ...(dto.models !== undefined ? { models: dto.models } : {}),
            ...(dto.rateLimit !== undefined ? { rateLimit: dto.rateLimit } : {}),
            ...(dto.priceGroup !== undefined ? { priceGroup: dto.priceGroup } : {}),
            ...(dto.maxTokenDays !== undefined ? { maxTokenDays: dto.maxTokenDays } : {}),
            ...(dto.billing !== undefined ? { billing: dto.billing } : {}),
          },
          include: WITH_MEMBERS,
        });
        await this.audit.record(
          {
            actor,
            action: 'team.update',
            target: { type: 'team', id },
            details: { from: policyOf(before), to: policyOf(updated) },
          },
          db,
        );
        return updated;
      }),
    );
    await this.events.teamChanged(id);
    return toTeamResponse(team);
  }

  async delete(actor: Actor, id: number): Promise<void> {
    await this.prisma.$transaction(async (db) => {
      const team = await this.existing(id, db);
      // A member's token creation holds the team's row FOR SHARE: with this lock, no token
      // can be added between the count and the delete.
      await lockTeamForUpdate(db, id);
      const tokens = await db.token.count({ where: { teamId: id } });
      if (tokens > 0) {
        throw new ApiError(
          'team_has_tokens',
          `Team ${team.name} still has ${tokens} token(s); delete them first`,
        );
      }
      await db.budget.deleteMany({ where: { teamId: id } });
      await db.team.delete({ where: { id } });
      await this.audit.record(
        {
          actor,
          action: 'team.delete',
          target: { type: 'team', id },
          details: { name: team.name, balance: Number(team.balance) },
        },
        db,
      );
    });
    await this.events.teamChanged(id);
  }

  async addMember(actor: Actor, id: number, dto: AddMemberDto): Promise<TeamResponse> {
    if ((dto.userId === undefined) === (dto.username === undefined)) {
      throw fieldError('userId', 'give exactly one of userId and username');
    }
    const field = dto.userId !== undefined ? 'userId' : 'username';
    const user = await this.prisma.adminUser.findFirst({
      where: dto.userId !== undefined ? { id: dto.userId } : { username: dto.username! },
    });
    if (!user) throw fieldError(field, `No account ${dto.userId ?? dto.username}`);
    if (user.role !== 'member') {
      throw fieldError(
        field,
        `${user.username} has the role ${user.role}; only accounts of role member join teams`,
      );
    }
    const team = await this.prisma.$transaction(async (db) => {
      await this.existing(id, db);
      try {
        await db.teamMember.create({ data: { teamId: id, userId: user.id } });
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new ApiError('conflict', `${user.username} is already a member of team ${id}`);
        }
        throw error;
      }
      await this.audit.record(
        {
          actor,
          action: 'team.member_add',
          target: { type: 'team', id },
          details: { userId: user.id, username: user.username },
        },
        db,
      );
      return this.existing(id, db);
    });
    await this.events.teamChanged(id);
    return toTeamResponse(team);
  }

  async removeMember(actor: Actor, id: number, userId: number): Promise<void> {
    await this.prisma.$transaction(async (db) => {
      await this.existing(id, db);
      const { count } = await db.teamMember.deleteMany({ where: { teamId: id, userId } });
      if (count === 0)
        throw new ApiError('not_found', `Account ${userId} is not a member of team ${id}`);
      await this.budgets.clearSubjects(db, [budgetSubject('member', id, userId)]);
      await this.audit.record(
        { actor, action: 'team.member_remove', target: { type: 'team', id }, details: { userId } },
        db,
      );
    });
    await this.events.teamChanged(id);
  }

  private async assertPriceGroup(name: string | undefined): Promise<void> {
    if (name === undefined || name === DEFAULT_PRICE_GROUP) return;
    if (!(await this.prisma.priceGroup.findUnique({ where: { name } }))) {
      throw fieldError('priceGroup', `No price group named ${name}; create it first`);
    }
  }

  private async unique<T>(name: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ApiError('conflict', `A team named "${name.trim()}" already exists`);
      }
      throw error;
    }
  }

  private async existing(id: number, db: Db = this.prisma): Promise<TeamWithMembers> {
    const team = await db.team.findUnique({ where: { id }, include: WITH_MEMBERS });
    if (!team) throw new ApiError('not_found', `No team with id ${id}`);
    return team;
  }
}

function policyOf(team: Team) {
  return {
    name: team.name,
    models: team.models.join(','),
    rateLimit: team.rateLimit,
    priceGroup: team.priceGroup,
    maxTokenDays: team.maxTokenDays,
    billing: team.billing,
  };
}

export function toTeamResponse(team: TeamWithMembers): TeamResponse {
  return {
    id: team.id,
    name: team.name,
    models: team.models,
    rateLimit: team.rateLimit,
    priceGroup: team.priceGroup,
    maxTokenDays: team.maxTokenDays,
    billing: team.billing,
    balance: Number(team.balance),
    members: team.members.map((m) => ({
      userId: m.userId,
      username: m.user.username,
      disabled: m.user.disabled,
      joinedAt: m.createdAt,
    })),
    tokenCount: team._count.tokens,
    createdAt: team.createdAt,
    updatedAt: team.updatedAt,
  };
}
