import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { generateSecretKeySpec } from '@switchyard/security';
import { startApp } from '@switchyard/testing';
import {
  ADMIN,
  bearer,
  login,
  newUser,
  resetChatData,
  sendMessage,
  startChat,
  type ChatHarness,
} from '../testing/chat-harness.fixture.js';
import { signLicense, type LicensePayload } from './license.js';

const RECOMMENDED = 'https://relay.recommended.example';
/** Nothing listens on the discard port: a connection there is refused at once. */
const CUSTOM = 'http://127.0.0.1:9';
const DAY = 86_400_000;

describe('editions and licenses', () => {
  const vendor = generateKeyPairSync('ed25519');
  const publicPem = vendor.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  let plus: ChatHarness;
  let admin: Record<string, string>;
  let installationId: string;
  let customRecordId: number;

  const license = (overrides: Partial<LicensePayload> = {}, key: KeyObject = vendor.privateKey) =>
    signLicense(
      {
        licenseId: randomUUID(),
        licensee: 'Example Ltd',
        edition: 'plus',
        installationId,
        issuedAt: new Date(Date.now() - DAY).toISOString(),
        expiresAt: new Date(Date.now() + 30 * DAY).toISOString(),
        ...overrides,
      },
      key,
    );

  beforeAll(async () => {
    await resetChatData();
    // Records made while the installation ran the community edition, which takes any address.
    const community = await startChat({ EDITION: 'community' });
    const communityAdmin = bearer(await login(community.api, ADMIN.username, ADMIN.password));
    const view = await community.api.get('/api/admin/edition').set(communityAdmin).expect(200);
    expect(view.body).toMatchObject({ edition: 'community', license: null });
    const custom = await community.api
      .post('/api/admin/api-keys')
      .set(communityAdmin)
      .send({ address: CUSTOM, key: 'sk-custom-1', purpose: 'chat' })
      .expect(201);
    customRecordId = custom.body.id as number;
    await community.api
      .post('/api/admin/models')
      .set(communityAdmin)
      .send({ name: 'gpt-4o', open: true })
      .expect(201);
    await community.close();

    plus = await startChat({
      EDITION: 'plus',
      RECOMMENDED_RELAYS: `${RECOMMENDED}/v1,https://relay2.recommended.example`,
      LICENSE_PUBLIC_KEY: publicPem,
    });
    admin = bearer(await login(plus.api, ADMIN.username, ADMIN.password));
    installationId = (await plus.api.get('/api/admin/edition').set(admin).expect(200)).body
      .installationId as string;
  });

  afterAll(async () => {
    await plus.close();
  });

  it('shows the edition, the installation id and the recommended relays', async () => {
    const view = await plus.api.get('/api/admin/edition').set(admin).expect(200);
    expect(view.body).toEqual({
      edition: 'plus',
      installationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      license: null,
      recommendedRelays: [RECOMMENDED, 'https://relay2.recommended.example'],
    });
  });

  it('accepts a recommended relay, however its address is written', async () => {
    const record = await plus.api
      .post('/api/admin/api-keys')
      .set(admin)
      .send({ address: `${RECOMMENDED}/v1/chat/completions`, key: 'sk-rec-1', purpose: 'drawing' })
      .expect(201);
    expect(record.body).toMatchObject({ address: RECOMMENDED, addressNormalized: true });
  });

  it('rejects any other address with the whitelist error', async () => {
    const refused = await plus.api
      .post('/api/admin/api-keys')
      .set(admin)
      .send({ address: 'https://my-own-relay.example', key: 'sk-own-1', purpose: 'chat' })
      .expect(403);
    expect(refused.body.error.code).toBe('address_not_whitelisted');
    expect(refused.body.error.message).toContain('is not on the whitelist');
    expect(refused.body.error.message).toMatch(/community edition or activate a license/);
    // Re-enabling or moving a record there is refused too; disabling is always possible.
    await plus.api
      .patch(`/api/admin/api-keys/${customRecordId}`)
      .set(admin)
      .send({ enabled: false })
      .expect(200);
    const enable = await plus.api
      .patch(`/api/admin/api-keys/${customRecordId}`)
      .set(admin)
      .send({ enabled: true })
      .expect(403);
    expect(enable.body.error.code).toBe('address_not_whitelisted');
  });

  it('does not call a record whose address is not on the whitelist', async () => {
    await plus.api
      .patch(`/api/admin/api-keys/${customRecordId}`)
      .set(admin)
      .send({ enabled: true })
      .expect(403);
    // Force the record on, as an older version could have left it.
    const { query } = await import('@switchyard/testing');
    await query(
      process.env.DATABASE_URL!,
      'UPDATE "ApiKeyRecord" SET enabled = true WHERE id = $1',
      [customRecordId],
    );
    const user = await newUser(plus.api);
    const conversation = await plus.api
      .post('/api/conversations')
      .set(bearer(user.token))
      .send({ title: 't', model: 'gpt-4o' })
      .expect(201);
    const reply = await sendMessage(plus, user.token, conversation.body.id as string, {
      content: 'hi',
    });
    expect(reply.status).toBe(403);
    expect(reply.json).toMatchObject({ error: { code: 'address_not_whitelisted' } });
  });

  it.each([
    [
      'forged',
      () => license({}, generateKeyPairSync('ed25519').privateKey),
      /signature is not valid/,
    ],
    [
      'expired',
      () => license({ expiresAt: new Date(Date.now() - 1000).toISOString() }),
      /expired on/,
    ],
    ['other-installation', () => license({ installationId: randomUUID() }), /another installation/],
    ['malformed', () => 'not-a-license', /malformed/],
  ])('refuses a %s license, naming the reason', async (_kind, make, reason) => {
    const refused = await plus.api
      .post('/api/admin/edition/activate')
      .set(admin)
      .send({ license: make() })
      .expect(400);
    expect(refused.body.error.code).toBe('license_invalid');
    expect(refused.body.error.message).toMatch(reason);
    const view = await plus.api.get('/api/admin/edition').set(admin).expect(200);
    expect(view.body.license).toBeNull();
  });

  it('accepts any address once a valid license is active, and calls it', async () => {
    const valid = license({ licensee: 'Acme' });
    const activated = await plus.api
      .post('/api/admin/edition/activate')
      .set(admin)
      .send({ license: valid })
      .expect(200);
    expect(activated.body.license).toEqual({
      licensee: 'Acme',
      expiresAt: expect.any(String),
      active: true,
    });
    // Activating the same license again changes nothing.
    await plus.api
      .post('/api/admin/edition/activate')
      .set(admin)
      .send({ license: valid })
      .expect(200);

    await plus.api
      .post('/api/admin/api-keys')
      .set(admin)
      .send({
        address: 'https://my-own-relay.example',
        key: 'sk-own-1',
        purpose: 'music',
        enabled: false,
      })
      .expect(201);
    await plus.api
      .patch(`/api/admin/api-keys/${customRecordId}`)
      .set(admin)
      .send({ enabled: true })
      .expect(200);

    const user = await newUser(plus.api);
    const conversation = await plus.api
      .post('/api/conversations')
      .set(bearer(user.token))
      .send({ model: 'gpt-4o' })
      .expect(201);
    const reply = await sendMessage(plus, user.token, conversation.body.id as string, {
      content: 'hi',
    });
    // Past the whitelist: the upstream is called (and refuses the connection).
    expect(reply.status).toBe(200);
    expect(reply.events.at(-1)).toMatchObject({
      event: 'error',
      data: { code: 'upstream_failed', address: CUSTOM },
    });
  });

  it('keeps the installation id across restarts', async () => {
    const again = await startChat({ EDITION: 'plus', LICENSE_PUBLIC_KEY: publicPem });
    try {
      const token = await login(again.api, ADMIN.username, ADMIN.password);
      const view = await again.api.get('/api/admin/edition').set(bearer(token)).expect(200);
      expect(view.body.installationId).toBe(installationId);
      expect(view.body.license).toMatchObject({ licensee: 'Acme', active: true });
    } finally {
      await again.close();
    }
  });

  it('cannot activate a license without a public key to check it', async () => {
    const keyless = await startChat({ EDITION: 'plus' });
    try {
      const token = await login(keyless.api, ADMIN.username, ADMIN.password);
      const refused = await keyless.api
        .post('/api/admin/edition/activate')
        .set(bearer(token))
        .send({ license: license() })
        .expect(400);
      expect(refused.body.error).toMatchObject({ code: 'license_invalid' });
      expect(refused.body.error.message).toContain('LICENSE_PUBLIC_KEY is not configured');
      // Without the key, no stored license counts either.
      const view = await keyless.api.get('/api/admin/edition').set(bearer(token)).expect(200);
      expect(view.body.license).toMatchObject({ active: false });
    } finally {
      await keyless.close();
    }
  });

  it('refuses to start with a public key that is not Ed25519', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const start = startApp('chat', {
      env: {
        SECRET_KEYS: generateSecretKeySpec('test'),
        LICENSE_PUBLIC_KEY: rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      },
    });
    await expect(start).rejects.toThrow(/LICENSE_PUBLIC_KEY must be an Ed25519 key/);
  });
});
