import { SecretCipher } from '@switchyard/security';
import { query } from '@switchyard/testing';
import {
  ADMIN,
  bearer,
  login,
  resetChatData,
  startChat,
  type ChatHarness,
} from '../testing/chat-harness.fixture.js';

interface ApiKeyRecord {
  id: number;
  platform: string;
  address: string;
  addressNormalized: boolean;
  keyLastFour: string;
  purpose: string;
  enabled: boolean;
}

describe('admin: API key records', () => {
  let chat: ChatHarness;
  let admin: Record<string, string>;
  const seen: string[] = [];

  const create = async (body: Record<string, unknown>, status = 201) => {
    const response = await chat.api
      .post('/api/admin/api-keys')
      .set(admin)
      .send(body)
      .expect(status);
    seen.push(JSON.stringify(response.body));
    return response.body as ApiKeyRecord & {
      error: { code: string; message: string; fields?: { field: string }[] };
    };
  };

  beforeAll(async () => {
    await resetChatData();
    chat = await startChat();
    admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
  });

  afterAll(async () => {
    await chat.close();
  });

  it('adds a record, seals the key, and shows only its last four characters', async () => {
    const key = 'sk-relay-secret-0123456789-WXYZ';
    const record = await create({
      platform: 'openai',
      address: 'https://relay.example.com',
      key,
      purpose: 'chat',
      enabled: true,
    });
    expect(record).toEqual({
      id: expect.any(Number),
      platform: 'openai',
      address: 'https://relay.example.com',
      addressNormalized: false,
      keyLastFour: 'WXYZ',
      purpose: 'chat',
      enabled: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const [row] = await query<{ keyCiphertext: string }>(
      process.env.DATABASE_URL!,
      'SELECT "keyCiphertext" FROM "ApiKeyRecord" WHERE id = $1',
      [record.id],
    );
    expect(row!.keyCiphertext).not.toContain('secret');
    expect(new SecretCipher(chat.env.SECRET_KEYS).open(row!.keyCiphertext)).toBe(key);

    const listed = await chat.api.get('/api/admin/api-keys').set(admin).expect(200);
    const fetched = await chat.api.get(`/api/admin/api-keys/${record.id}`).set(admin).expect(200);
    seen.push(JSON.stringify(listed.body), JSON.stringify(fetched.body));
    expect(seen.join('\n')).not.toContain('secret-0123456789');
  });

  it('cuts a pre-v4.1.1 full endpoint to its base and says so', async () => {
    const record = await create({
      address: 'https://old-relay.example.com/v1/chat/completions',
      key: 'sk-old-1234',
      purpose: 'chat',
    });
    expect(record).toMatchObject({
      address: 'https://old-relay.example.com',
      addressNormalized: true,
    });
    const versioned = await create({
      address: 'https://Relay2.example.com/v1/',
      key: 'sk-v1-5678',
    });
    expect(versioned).toMatchObject({
      address: 'https://relay2.example.com',
      addressNormalized: false,
    });
  });

  it('refuses an address that is not an http(s) base URL, naming the field', async () => {
    for (const address of [
      'relay.example.com',
      'ftp://relay.example.com',
      'https://u:p@relay.example.com',
    ]) {
      const refused = await create({ address, key: 'sk-x-1234' }, 400);
      expect(refused.error.code).toBe('validation_failed');
      expect(refused.error.fields?.[0]?.field).toBe('address');
    }
  });

  it('accepts only the OpenAI-compatible platform, pointing others to the gateway', async () => {
    const refused = await create(
      { platform: 'azure', address: 'https://relay.example.com', key: 'sk-1' },
      400,
    );
    expect(refused.error.fields?.[0]?.field).toBe('platform');
    expect(refused.error.message).toBe('Invalid platform');
    expect(JSON.stringify(refused)).toMatch(/behind the gateway/);
  });

  it('refuses a key with spaces and unknown fields', async () => {
    await create({ address: 'https://relay.example.com', key: 'two words' }, 400);
    await create({ address: 'https://relay.example.com', key: 'sk-1', keyCiphertext: 'x' }, 400);
  });

  it('disables and enables a record, changes its key and address', async () => {
    const record = await create({
      address: 'https://relay3.example.com',
      key: 'sk-first-AAAA',
      purpose: 'drawing',
    });
    const disabled = await chat.api
      .patch(`/api/admin/api-keys/${record.id}`)
      .set(admin)
      .send({ enabled: false })
      .expect(200);
    expect(disabled.body.enabled).toBe(false);
    const enabled = await chat.api
      .patch(`/api/admin/api-keys/${record.id}`)
      .set(admin)
      .send({
        enabled: true,
        key: 'sk-second-BBBB',
        address: 'https://relay3.example.com/v1/chat/completions',
      })
      .expect(200);
    expect(enabled.body).toMatchObject({
      enabled: true,
      keyLastFour: 'BBBB',
      address: 'https://relay3.example.com',
      addressNormalized: true,
      purpose: 'drawing',
    });
    const drawing = await chat.api
      .get('/api/admin/api-keys')
      .query({ purpose: 'drawing' })
      .set(admin)
      .expect(200);
    expect(drawing.body.total).toBe(1);
    expect((drawing.body.items as ApiKeyRecord[]).map((r) => r.id)).toEqual([record.id]);
  });

  it('deletes a record; a missing one is 404', async () => {
    const record = await create({ address: 'https://gone.example.com', key: 'sk-gone' });
    await chat.api.delete(`/api/admin/api-keys/${record.id}`).set(admin).expect(204);
    const missing = await chat.api.get(`/api/admin/api-keys/${record.id}`).set(admin).expect(404);
    expect(missing.body.error.code).toBe('not_found');
    await chat.api
      .patch(`/api/admin/api-keys/${record.id}`)
      .set(admin)
      .send({ enabled: true })
      .expect(404);
    await chat.api.delete(`/api/admin/api-keys/${record.id}`).set(admin).expect(404);
  });
});
