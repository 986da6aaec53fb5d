import { type Team } from '@switchyard/db';
import { type Db } from '../common/db.js';

// Row locks on a team, taken inside the caller's transaction (docs/teams.md, "Teams"):
// FOR SHARE while a token is checked against the team and made, so the team cannot be
// deleted or its policy changed meanwhile; FOR UPDATE to delete it, so no token is added
// between the count of its tokens and the delete.

/** The team, its row held FOR SHARE until the transaction ends; undefined when there is none. */
export async function shareTeam(db: Db, teamId: number): Promise<Team | undefined> {
  const [team] = await db.$queryRaw<Team[]>`
    SELECT * FROM "Team" WHERE id = ${teamId} FOR SHARE`;
  return team;
}

/** Holds the team's row FOR UPDATE until the transaction ends. */
export async function lockTeamForUpdate(db: Db, teamId: number): Promise<void> {
  await db.$queryRaw`SELECT id FROM "Team" WHERE id = ${teamId} FOR UPDATE`;
}
