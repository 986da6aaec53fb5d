import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { PrismaService } from '@switchyard/db';
import { UNIT_MULTIPLIER } from '@switchyard/domain';
import { AuditService } from '../audit/audit.service.js';
import { type Actor } from '../common/actor.js';
import { ChangeEvents } from '../events/change-events.js';
import {
  multiplierPpm,
  ratioText,
  type PriceGroupList,
  type PriceGroupResponse,
  type SetPriceGroupDto,
} from './price-groups.dto.js';

/** The group every team starts in; it always exists, at 1x unless an administrator changes it. */
export const DEFAULT_PRICE_GROUP = 'default';

/** Price groups (docs/teams.md, "Price groups"): a multiplier of model prices per team. */
@Injectable()
export class PriceGroupsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly events: ChangeEvents,
  ) {}

  async list(): Promise<PriceGroupList> {
    const [groups, counts] = await Promise.all([
      this.prisma.priceGroup.findMany({ orderBy: { name: 'asc' } }),
      this.prisma.team.groupBy({ by: ['priceGroup'], _count: { _all: true } }),
    ]);
    const teams = new Map(counts.map((c) => [c.priceGroup, c._count._all]));
    const items: PriceGroupResponse[] = groups.map((g) =>
      view(g.name, g.multiplier, g.updatedAt, teams),
    );
    // The migration creates `default`; a database restored without it still shows it, at 1x.
    if (!groups.some((g) => g.name === DEFAULT_PRICE_GROUP)) {
      items.unshift(view(DEFAULT_PRICE_GROUP, UNIT_MULTIPLIER, null, teams));
    }
    return { items };
  }

  async set(actor: Actor, name: string, dto: SetPriceGroupDto): Promise<PriceGroupResponse> {
    const ppm = multiplierPpm(dto.multiplier)!;
    const group = await this.prisma.$transaction(async (db) => {
      const before = await db.priceGroup.findUnique({ where: { name } });
      const saved = await db.priceGroup.upsert({
        where: { name },
        create: { name, multiplier: ppm },
        update: { multiplier: ppm },
      });
      await this.audit.record(
        {
          actor,
          action: before ? 'price_group.update' : 'price_group.create',
          target: { type: 'price_group', id: name },
          details: { multiplierPpm: ppm, ...(before ? { fromPpm: before.multiplier } : {}) },
        },
        db,
      );
      return saved;
    });
    await this.events.priceGroupChanged(name);
    const teamCount = await this.prisma.team.count({ where: { priceGroup: name } });
    return view(group.name, group.multiplier, group.updatedAt, new Map([[name, teamCount]]));
  }

  async delete(actor: Actor, name: string): Promise<void> {
    if (name === DEFAULT_PRICE_GROUP) {
      throw new ApiError('conflict', 'The default price group always exists; set it to 1 instead');
    }
    await this.prisma.$transaction(async (db) => {
      const group = await db.priceGroup.findUnique({ where: { name } });
      if (!group) throw new ApiError('not_found', `No price group named ${name}`);
      const teams = await db.team.count({ where: { priceGroup: name } });
      if (teams > 0) {
        throw new ApiError('conflict', `${teams} team(s) use price group ${name}; move them first`);
      }
      await db.priceGroup.delete({ where: { name } });
      await this.audit.record(
        {
          actor,
          action: 'price_group.delete',
          target: { type: 'price_group', id: name },
          details: { multiplierPpm: group.multiplier },
        },
        db,
      );
    });
    await this.events.priceGroupChanged(name);
  }
}

function view(
  name: string,
  ppm: number,
  updatedAt: Date | null,
  teams: Map<string, number>,
): PriceGroupResponse {
  return {
    name,
    multiplier: ratioText(ppm),
    multiplierPpm: ppm,
    teamCount: teams.get(name) ?? 0,
    updatedAt,
  };
}
