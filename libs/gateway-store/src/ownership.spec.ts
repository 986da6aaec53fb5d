import { linesMatching, sourceFiles } from '@switchyard/testing';

// This lib is the only code that writes the gateway's tables (docs/architecture.md, "Table
// owners"): a write anywhere else in production code fails here. Test fixtures may still
// set rows up directly.

const OWNED_TABLE_WRITES = [
  /\.(channel|channelKey|token|auditLog)\.(create|createMany|update|updateMany|upsert|delete|deleteMany)\b/,
  /\b(UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+"(Channel|ChannelKey|Token|AuditLog)"/i,
];

describe('owner of Channel, ChannelKey, Token and AuditLog', () => {
  it('recognises a write to an owned table, and only that', () => {
    const writes = [
      'await db.channel.updateMany({ where })',
      'tx.channelKey.create({ data })',
      'this.prisma.token.delete({ where: { id } })',
      'db.auditLog.createMany({ data })',
      'UPDATE "Token" SET status = $1',
      'insert into "ChannelKey" (id) VALUES (1)',
      'DELETE FROM "AuditLog" WHERE id = 1',
    ];
    const reads = [
      'db.channel.findMany({ where })',
      'this.prisma.tokenUsage.update({})',
      'UPDATE "UsageLog" SET cost = 1',
      'SELECT * FROM "Token"',
    ];
    for (const line of writes) expect(OWNED_TABLE_WRITES.some((p) => p.test(line))).toBe(true);
    for (const line of reads) expect(OWNED_TABLE_WRITES.some((p) => p.test(line))).toBe(false);
  });

  it('is written only by @switchyard/gateway-store', () => {
    const files = sourceFiles({ roots: ['apps', 'libs'] }).filter(
      (file) => !file.startsWith('libs/gateway-store/'),
    );
    expect(files.length).toBeGreaterThan(50);
    expect(linesMatching(files, OWNED_TABLE_WRITES)).toEqual([]);
  });
});
