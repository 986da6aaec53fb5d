import { type Db } from '../common/db.js';

/**
 * Marks the code used only if it is unused and unexpired, in one statement, so two members
 * redeeming one code at once cannot both get it. Empty when it is not there to take.
 */
export function takeCode(
  db: Db,
  hash: string,
  actorId: number | null,
  teamId: number,
): Promise<{ id: number; value: bigint; batchId: number; lastFour: string }[]> {
  return db.$queryRaw`
    UPDATE "RedemptionCode" c
       SET "redeemedById" = ${actorId}, "redeemedTeamId" = ${teamId}, "redeemedAt" = now()
      FROM "RedemptionBatch" b
     WHERE c."codeHash" = ${hash} AND b.id = c."batchId"
       AND c."redeemedAt" IS NULL AND (b."expiresAt" IS NULL OR b."expiresAt" > now())
    RETURNING c.id, b.value, b.id AS "batchId", c."lastFour"`;
}
