import { Prisma, type PrismaService } from '@switchyard/db';

/**
 * Users who sent a chat message (their conversation was touched) or whose A2A key sent a
 * task, in each window.
 */
const ACTIVE_USERS = Prisma.sql`
  SELECT count(DISTINCT "userId") FILTER (WHERE at > now() - interval '5 minutes')::int AS "5m",
         count(DISTINCT "userId") FILTER (WHERE at > now() - interval '1 hour')::int AS "1h",
         count(DISTINCT "userId")::int AS "24h"
    FROM (SELECT "userId", "updatedAt" AS at FROM "Conversation"
           WHERE "updatedAt" > now() - interval '24 hours'
          UNION ALL
          SELECT "userId", "updatedAt" FROM "A2aTask"
           WHERE "updatedAt" > now() - interval '24 hours') AS activity`;

/** Distinct active users in the last 5 minutes, hour and day (`chat_active_users`). */
export async function activeUsers(
  prisma: PrismaService,
): Promise<Record<'5m' | '1h' | '24h', number>[]> {
  return prisma.$queryRaw<Record<'5m' | '1h' | '24h', number>[]>(ACTIVE_USERS);
}
