import { ReportingDatabase } from '@switchyard/db';
import {
  createTestDatabase,
  PrivatePostgres,
  query,
  waitFor,
  type TestDatabase,
} from '@switchyard/testing';
import { AdminHarness, randomSuffix } from '../testing/admin-harness.fixture.js';

// DATABASE_READ_URL on real engines: a Postgres primary of the test's own and a hot standby
// streaming from it (pg_basebackup). The standby's replay is paused to hold it behind the
// primary at a known point: what the admin then shows tells which server each read used.
// Reports (usage logs, totals, the overview's chart) come from the standby; writes and the
// reads that follow an administrator's own write come from the primary (docs/scaling.md,
// "Read replica").

describe('read replica', () => {
  const primary = new PrivatePostgres();
  let standby: PrivatePostgres | undefined;
  let database: TestDatabase;
  let replicaUrl: string;
  let h: AdminHarness;
  let api: ReturnType<AdminHarness['api']>;
  let tokenId: number;

  const onStandby = (sql: string, values: unknown[] = []) => query(replicaUrl, sql, values);
  const replayed = async () => {
    // The standby has replayed everything the primary has written so far. The insert
    // position, not the write position: the test's Postgres commits asynchronously
    // (synchronous_commit=off), so a commit record can still wait in the WAL buffers, behind
    // the written position, for the WAL writer's next round.
    const [{ lsn }] = (await query<{ lsn: string }>(
      database.url,
      'SELECT pg_current_wal_insert_lsn()::text AS lsn',
    )) as [{ lsn: string }];
    await waitFor(
      async () =>
        (
          await onStandby(
            'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught FROM pg_stat_wal_receiver',
            [lsn],
          )
        )[0]?.caught === true || undefined,
      { what: 'the standby to replay the primary' },
    );
  };
  const logs = async () =>
    (await api.get(`/api/usage/logs?tokenId=${tokenId}`).expect(200)).body as { total: number };
  const summary = async () =>
    (
      await api
        .get(
          `/api/usage/summary?groupBy=model&tokenId=${tokenId}&from=2026-01-01T00:00:00Z&to=2099-01-01T00:00:00Z`,
        )
        .expect(200)
    ).body as { totals: { requests: number; cost: number } };
  const chart = async () => {
    const body = (await api.get('/api/overview/series?range=24h&splitBy=model').expect(200))
      .body as { lines: { requests: number[] }[] };
    return body.lines.flatMap((line) => line.requests).reduce((a, b) => a + b, 0);
  };

  beforeAll(async () => {
    await primary.start();
    database = await createTestDatabase(primary.url);
    standby = await primary.standby();
    const url = new URL(database.url);
    url.port = String(standby.port);
    replicaUrl = url.toString();
    h = await AdminHarness.start({
      name: 'replica',
      databaseUrl: database.url,
      env: { DATABASE_READ_URL: replicaUrl },
    });
    const admin = await h.session('admin');
    api = h.api(admin.token);
    // A write through the API: were it sent to the standby, it would be refused there.
    tokenId = (
      await api.post('/api/tokens', { name: 'replica-a', expiresAt: null, quota: null }).expect(201)
    ).body.id as number;
    await replayed();
  }, 120_000);

  afterAll(async () => {
    await h?.close();
    await standby?.remove();
    await primary.remove();
  });

  it('reads reports from the replica, and what follows a write from the primary', async () => {
    expect(h.app.get(ReportingDatabase).target).toBe('replica');
    expect((await onStandby('SELECT pg_is_in_recovery() AS standby'))[0]).toEqual({
      standby: true,
    });

    await onStandby('SELECT pg_wal_replay_pause()');
    await waitFor(
      async () =>
        (await onStandby('SELECT pg_get_wal_replay_pause_state() AS s'))[0]?.s === 'paused' ||
        undefined,
      { what: 'the standby to pause its replay' },
    );
    await query(
      database.url,
      `INSERT INTO "UsageLog" ("requestId", "tokenId", endpoint, model, "promptTokens",
         "completionTokens", cost, status, "latencyMs", "requestedAt")
       VALUES ($1, $2, 'chat.completions', 'gpt-4o', 10, 5, 42, 200, 100, now())`,
      [`req-${randomSuffix()}`, tokenId],
    );

    // Held behind: the reports do not have the row yet...
    expect(await logs()).toMatchObject({ total: 0 });
    expect((await summary()).totals).toMatchObject({ requests: 0, cost: 0 });
    expect(await chart()).toBe(0);
    // ...while a write and the read after it are the primary's, at once.
    const { version } = (await api.get(`/api/tokens/${tokenId}`).expect(200)).body as {
      version: number;
    };
    await api.patch(`/api/tokens/${tokenId}`, { name: 'replica-renamed', version }).expect(200);
    expect((await api.get(`/api/tokens/${tokenId}`).expect(200)).body).toMatchObject({
      name: 'replica-renamed',
    });

    await onStandby('SELECT pg_wal_replay_resume()');
    await replayed();
    expect(await logs()).toMatchObject({ total: 1 });
    expect((await summary()).totals).toMatchObject({ requests: 1, cost: 42 });
    expect(await chart()).toBe(1);
  });
});
