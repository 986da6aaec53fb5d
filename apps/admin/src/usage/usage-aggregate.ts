import { Prisma } from '@switchyard/db';

// The one query that sums usage logs into groups: the Usage page's summary and the
// Overview's series both read it, so a request, a failure and a cost count the same on
// every page.

/** What usage can be split by besides time. */
export type UsageDimension = 'model' | 'token' | 'channel' | 'team';

/** The sums of one group of usage logs. */
export interface UsageTotalsRow {
  /** The dimension's value (a model name, or a token, channel or team id as text). */
  key: string | null;
  /** A token's, channel's or team's name; null for models, whose key is their name. */
  label: string | null;
  requests: bigint;
  failures: bigint;
  promptTokens: bigint;
  completionTokens: bigint;
  cost: bigint;
}

const DIMENSION_KEY: Record<UsageDimension, Prisma.Sql> = {
  model: Prisma.sql`u.model`,
  token: Prisma.sql`u."tokenId"::text`,
  channel: Prisma.sql`u."channelId"::text`,
  team: Prisma.sql`u."teamId"::text`,
};

const DIMENSION_LABEL: Record<UsageDimension, Prisma.Sql> = {
  model: Prisma.sql`NULL::text`,
  token: Prisma.sql`max(t.name)`,
  channel: Prisma.sql`max(c.name)`,
  team: Prisma.sql`max(tm.name)`,
};

/** The UTC day of a usage log, as `YYYY-MM-DD`. */
export const UTC_DAY = Prisma.sql`to_char(u."requestedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;

/** The start of the `seconds`-long bucket (aligned to the epoch) a usage log falls in. */
export const bucketStart = (seconds: number): Prisma.Sql =>
  Prisma.sql`to_timestamp(floor(extract(epoch FROM u."requestedAt") / ${seconds}) * ${seconds})`;

export interface UsageGrouping {
  /** Grouped by this expression (a time bucket) before the key, when given; selected as `bucket`. */
  bucket?: Prisma.Sql;
  /** The group's key: a dimension, or a time expression with no label (such as `UTC_DAY`). */
  key: UsageDimension | Prisma.Sql;
  /** Conditions on the usage log `u`, all of which must hold. */
  where: Prisma.Sql[];
}

/** `SELECT [bucket,] key, label, requests, … GROUP BY …`: callers add ORDER BY and LIMIT. */
export function usageTotalsQuery({ bucket, key, where }: UsageGrouping): Prisma.Sql {
  const byDimension = typeof key === 'string';
  const keyColumn = byDimension ? DIMENSION_KEY[key] : key;
  const labelColumn = byDimension ? DIMENSION_LABEL[key] : Prisma.sql`NULL::text`;
  const columns = [
    ...(bucket ? [Prisma.sql`${bucket} AS bucket`] : []),
    Prisma.sql`${keyColumn} AS key`,
    Prisma.sql`${labelColumn} AS label`,
  ];
  const grouped = bucket ? Prisma.sql`1, 2` : Prisma.sql`1`;
  return Prisma.sql`
    SELECT ${Prisma.join(columns, ', ')},
           count(*)::bigint AS requests,
           (count(*) FILTER (WHERE u.status >= 400))::bigint AS failures,
           coalesce(sum(u."promptTokens"), 0)::bigint AS "promptTokens",
           coalesce(sum(u."completionTokens"), 0)::bigint AS "completionTokens",
           coalesce(sum(u.cost), 0)::bigint AS cost
      FROM "UsageLog" u
      LEFT JOIN "Token" t ON t.id = u."tokenId"
      LEFT JOIN "Channel" c ON c.id = u."channelId"
      LEFT JOIN "Team" tm ON tm.id = u."teamId"
     WHERE ${Prisma.join(where, ' AND ')}
     GROUP BY ${grouped}`;
}
