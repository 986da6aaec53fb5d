import { query } from '@switchyard/testing';
import { quotaSpent, quotaSpentSql, tokenStatusAfterEdit } from './quota.js';

/** [used, quota, spent] */
const CASES: [bigint, bigint | null, boolean][] = [
  [0n, null, false],
  [9_000_000_000_000n, null, false],
  [0n, 0n, true],
  [0n, 1n, false],
  [999n, 1_000n, false],
  [1_000n, 1_000n, true],
  [1_001n, 1_000n, true],
  [9_007_199_254_740_993n, 9_007_199_254_740_992n, true],
];

describe('quota spent', () => {
  it.each(CASES)('used %s of %s: spent %s', (used, quota, spent) => {
    expect(quotaSpent(used, quota)).toBe(spent);
  });

  it('reads the same in SQL, over the columns of a Token row', async () => {
    const rows = await query<{ spent: boolean }>(
      process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
      `SELECT ${quotaSpentSql('t')} AS spent
         FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS t("usedQuota", "quota", index)
        ORDER BY t.index`,
      [CASES.map(([used]) => used.toString()), CASES.map(([, quota]) => quota?.toString() ?? null)],
    );
    expect(rows.map((row) => row.spent)).toEqual(CASES.map(([, , spent]) => spent));
    expect(quotaSpentSql()).toBe('("quota" IS NOT NULL AND "usedQuota" >= "quota")');
  });
});

describe('token status after an edit', () => {
  const spent = { status: 'exhausted' as const, usedQuota: 500n };

  it('disables on request, and keeps a disabled token disabled unless enabled', () => {
    expect(tokenStatusAfterEdit({ status: 'enabled', usedQuota: 0n }, false, null)).toBe(
      'disabled',
    );
    expect(tokenStatusAfterEdit({ status: 'disabled', usedQuota: 0n }, undefined, null)).toBe(
      'disabled',
    );
    expect(tokenStatusAfterEdit({ status: 'disabled', usedQuota: 0n }, true, null)).toBe('enabled');
  });

  it('lets the quota decide between enabled and exhausted', () => {
    expect(tokenStatusAfterEdit(spent, undefined, 500n)).toBe('exhausted');
    expect(tokenStatusAfterEdit(spent, undefined, 501n)).toBe('enabled');
    expect(tokenStatusAfterEdit(spent, undefined, null)).toBe('enabled');
    expect(tokenStatusAfterEdit({ status: 'enabled', usedQuota: 10n }, true, 10n)).toBe(
      'exhausted',
    );
  });
});
