import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@switchyard/db';
import { type Db } from '../common/db.js';

// Reads of the request log metering writes, and the flags that turn it on. Plain SQL for
// the reads: the list shows each body's length without reading the bodies, and the detail
// joins the usage row by request id (the two tables have no foreign key between them).

export interface RequestLogRow {
  requestId: string;
  tokenId: number;
  tokenName: string | null;
  endpoint: string;
  model: string;
  status: number;
  traceId: string | null;
  requestChars: number;
  responseChars: number;
  requestTruncated: boolean;
  responseTruncated: boolean;
  requestedAt: Date;
}

export interface RequestLogDetailRow extends RequestLogRow {
  requestBody: string;
  responseBody: string;
  /** From the usage row; null (all of them) until metering has billed the request. */
  usageChannelId: number | null;
  upstreamModel: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  cost: bigint | null;
  latencyMs: number | null;
  firstByteMs: number | null;
  attempts: number | null;
  errorCode: string | null;
}

export interface RequestLogFilter {
  tokenId?: number;
  teamId?: number;
}

const SUMMARY_COLUMNS = Prisma.sql`
  r."requestId", r."tokenId", t.name AS "tokenName", r.endpoint, r.model, r.status,
  r."traceId", length(r."requestBody")::int AS "requestChars",
  length(r."responseBody")::int AS "responseChars", r."requestTruncated",
  r."responseTruncated", r."requestedAt"`;

@Injectable()
export class RequestLogRepository {
  constructor(private readonly prisma: PrismaService) {}

  async listNewestFirst(
    filter: RequestLogFilter,
    page: { skip: number; take: number },
  ): Promise<{ rows: RequestLogRow[]; total: number }> {
    const where = Prisma.sql`
      WHERE (${filter.tokenId ?? null}::int IS NULL OR r."tokenId" = ${filter.tokenId ?? null}::int)
        AND (${filter.teamId ?? null}::int IS NULL OR t."teamId" = ${filter.teamId ?? null}::int)`;
    const [rows, [count]] = await Promise.all([
      this.prisma.$queryRaw<RequestLogRow[]>(Prisma.sql`
        SELECT ${SUMMARY_COLUMNS}
          FROM "RequestLog" r LEFT JOIN "Token" t ON t.id = r."tokenId"
        ${where}
         ORDER BY r."requestedAt" DESC, r."requestId" DESC
         LIMIT ${page.take} OFFSET ${page.skip}`),
      this.prisma.$queryRaw<{ total: number }[]>(Prisma.sql`
        SELECT count(*)::int AS total
          FROM "RequestLog" r LEFT JOIN "Token" t ON t.id = r."tokenId"
        ${where}`),
    ]);
    return { rows, total: count?.total ?? 0 };
  }

  async find(requestId: string): Promise<RequestLogDetailRow | undefined> {
    const [row] = await this.prisma.$queryRaw<RequestLogDetailRow[]>(Prisma.sql`
      SELECT ${SUMMARY_COLUMNS}, r."requestBody", r."responseBody",
             u."channelId" AS "usageChannelId", u."upstreamModel", u."promptTokens",
             u."completionTokens", u.cost, u."latencyMs", u."firstByteMs", u.attempts,
             u."errorCode"
        FROM "RequestLog" r
        LEFT JOIN "Token" t ON t.id = r."tokenId"
        LEFT JOIN "UsageLog" u ON u."requestId" = r."requestId"
       WHERE r."requestId" = ${requestId}`);
    return row;
  }

  loggedTokens(): Promise<{ id: number; name: string }[]> {
    return this.prisma.token.findMany({
      where: { requestLog: true },
      select: { id: true, name: true },
      orderBy: { id: 'asc' },
    });
  }

  loggedTeams(): Promise<{ id: number; name: string }[]> {
    return this.prisma.team.findMany({
      where: { requestLog: true },
      select: { id: true, name: true },
      orderBy: { id: 'asc' },
    });
  }

  transaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  /** The team's flag as it was and its tokens, or undefined when there is no such team. */
  async setTeamFlag(
    db: Db,
    id: number,
    enabled: boolean,
  ): Promise<{ before: boolean; tokens: { id: number; keyHash: string }[] } | undefined> {
    const [current] = await db.$queryRaw<{ requestLog: boolean }[]>(Prisma.sql`
      SELECT "requestLog" FROM "Team" WHERE id = ${id} FOR UPDATE`);
    if (!current) return undefined;
    await db.team.update({ where: { id }, data: { requestLog: enabled } });
    const tokens = await db.token.findMany({
      where: { teamId: id },
      select: { id: true, keyHash: true },
    });
    return { before: current.requestLog, tokens };
  }
}
