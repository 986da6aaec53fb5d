// When a gateway token's quota is spent, and what an administrator's edit makes of its
// status: the one statement of both rules. Where they are decided in SQL (the edge reading
// a token, metering settling usage), the fragment below is the same predicate, and
// quota.spec.ts runs both over one table of cases.

/** A token's statuses, as the database stores them. */
export type TokenStatusName = 'enabled' | 'disabled' | 'exhausted';

/** A quota is spent once what was used reaches it; a token without one never runs out. */
export function quotaSpent(used: bigint, quota: bigint | null): boolean {
  return quota !== null && used >= quota;
}

/**
 * `quotaSpent` over a `Token` row in SQL (`alias` qualifies the columns: `t` for
 * `t."quota"`).
 */
export function quotaSpentSql(alias?: string): string {
  const column = (name: string) => (alias ? `${alias}."${name}"` : `"${name}"`);
  return `(${column('quota')} IS NOT NULL AND ${column('usedQuota')} >= ${column('quota')})`;
}

/**
 * The status after an administrator's edit: disabling wins; a disabled token stays disabled
 * unless enabled; otherwise the quota decides between enabled and exhausted (so raising a
 * spent quota brings a token back). Metering's only move, enabled to exhausted, is
 * `quotaSpentSql` in its settlement.
 */
export function tokenStatusAfterEdit(
  current: { status: TokenStatusName; usedQuota: bigint },
  enabled: boolean | undefined,
  quota: bigint | null,
): TokenStatusName {
  if (enabled === false) return 'disabled';
  if (enabled === undefined && current.status === 'disabled') return 'disabled';
  return quotaSpent(current.usedQuota, quota) ? 'exhausted' : 'enabled';
}
