import { query, startApp, type AppProcess } from '@switchyard/testing';
import { AdminHarness, channelBody, type Session } from './testing/admin-harness.fixture.js';

// An upstream key must never leave the service: not in a response, not in a log line, not
// in the audit trail, not in an event. The keys here do not look like `sk-…`, so the
// logger's masking cannot hide a leak; the logger runs at its most verbose level.

const KEYS = {
  created: 'UpstreamKeyCreated0001Alpha',
  added: 'UpstreamKeyAdded0002Bravo',
  imported: 'UpstreamKeyImported0003Charlie',
  rejected: 'UpstreamKeyRejected0004Delta',
  healthy: 'mock-UpstreamKeyHealthy0005Echo',
};

describe('upstream keys', () => {
  let h: AdminHarness;
  let upstream: AppProcess;
  let admin: Session;

  beforeAll(async () => {
    upstream = await startApp('mock-upstream', { env: { MOCK_ACCOUNTS: KEYS.healthy } });
    h = await AdminHarness.start({ name: 'secrets' });
    admin = await h.session('admin');
  });

  afterAll(async () => {
    await h?.close();
    await upstream?.stop();
  });

  it('never appear in any response, log line, audit row or event', async () => {
    const api = h.api(admin.token);
    const created = await api
      .post('/api/channels', channelBody({ keys: [KEYS.created], baseUrl: `${upstream.url}/v1` }))
      .expect(201);
    const id = created.body.id as number;
    await api.get('/api/channels').expect(200);
    await api.get(`/api/channels/${id}`).expect(200);
    const updated = await api
      .patch(`/api/channels/${id}`, { version: 1, keys: [KEYS.created, KEYS.added, KEYS.healthy] })
      .expect(200);
    const keyIds = (updated.body.keys as { id: number }[]).map((k) => k.id);
    await api.patch(`/api/channels/${id}/keys/${keyIds[1]}`, { limits: { rpm: 3 } }).expect(200);
    for (const keyId of keyIds) {
      await api.post(`/api/channels/${id}/test`, { keyId }).expect(200);
    }
    await api.post('/api/channels/import', [channelBody({ keys: [KEYS.imported] })]).expect(201);
    // Refused bodies: validation messages must not quote the offending value.
    await api
      .post('/api/channels', channelBody({ keys: [KEYS.rejected, KEYS.rejected] }))
      .expect(400);
    await api
      .post('/api/channels/import', [channelBody({ keys: [KEYS.rejected], kind: 'bad' })])
      .expect(400);
    await api.patch(`/api/channels/${id}`, { version: 99, keys: [KEYS.rejected] }).expect(409);
    await api.post(`/api/channels/${id}/disable`).expect(200);
    await api.delete(`/api/channels/${id}`).expect(204);
    // Events travel asynchronously: the last one is the deletion's.
    await h.event('channel.changed', (e) => e.channelId === id && e.action === 'deleted');

    expect(h.responses.length).toBeGreaterThan(10);
    expect(h.logs.length).toBeGreaterThan(10);
    const audit = await query(h.databaseUrl, `SELECT details::text FROM "AuditLog"`);
    const places = {
      responses: h.responses.join('\n'),
      logs: h.logs.join('\n'),
      audit: JSON.stringify(audit),
      events: JSON.stringify(h.events),
    };
    for (const [place, text] of Object.entries(places)) {
      for (const secret of Object.values(KEYS)) {
        expect([place, secret, text.includes(secret)]).toEqual([place, secret, false]);
      }
    }
    // The key did reach the upstream, so the test above had something to leak.
    const stats = (await (await fetch(`${upstream.url}/_mock/accounts`)).json()) as {
      key: string;
      requests: number;
    }[];
    expect(stats.find((s) => s.key === KEYS.healthy)?.requests).toBeGreaterThan(0);
  });
});
