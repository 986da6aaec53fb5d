import {
  ADMIN,
  bearer,
  login,
  newUser,
  resetChatData,
  startChat,
  type ChatHarness,
} from '../testing/chat-harness.fixture.js';

// The chat settings page's API (docs/credits.md, "Settings"): stored in Postgres, applied to
// the next registration or task, administrators only, bad values a 400 naming the field.

/** The invitation settings' defaults, which these tests leave alone except where they say. */
const DEFAULTS = { inviteReward: 50, invitesPerAddress: 3 };

describe('chat settings', () => {
  let chat: ChatHarness;
  let admin: Record<string, string>;

  beforeAll(async () => {
    await resetChatData();
    chat = await startChat();
    admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
    await chat.api.post('/api/admin/models').set(admin).send({ name: 'decider' }).expect(201);
    await chat.api
      .post('/api/admin/models')
      .set(admin)
      .send({ name: 'painter', purpose: 'drawing' })
      .expect(201);
  });

  afterAll(async () => {
    await chat?.close();
  });

  it('starts from the defaults a new installation works with', async () => {
    const settings = await chat.api.get('/api/admin/chat-settings').set(admin).expect(200);
    expect(settings.body).toEqual({ ...DEFAULTS, registrationGrant: 100, a2aModel: null });
  });

  it('changes only the fields sent, and the next registration gets the new grant', async () => {
    const saved = await chat.api
      .put('/api/admin/chat-settings')
      .set(admin)
      .send({ registrationGrant: 25 })
      .expect(200);
    expect(saved.body).toEqual({ ...DEFAULTS, registrationGrant: 25, a2aModel: null });
    const picked = await chat.api
      .put('/api/admin/chat-settings')
      .set(admin)
      .send({ a2aModel: ' decider ' })
      .expect(200);
    expect(picked.body).toEqual({ ...DEFAULTS, registrationGrant: 25, a2aModel: 'decider' });
    const user = await newUser(chat.api, 'after');
    const balance = await chat.api.get('/api/credits').set(bearer(user.token)).expect(200);
    expect(balance.body.balance).toBe(25);
    const cleared = await chat.api
      .put('/api/admin/chat-settings')
      .set(admin)
      .send({ a2aModel: null, registrationGrant: 100 })
      .expect(200);
    expect(cleared.body).toEqual({ ...DEFAULTS, registrationGrant: 100, a2aModel: null });
  });

  it.each([
    [{ registrationGrant: -1 }, 'registrationGrant'],
    [{ registrationGrant: 2.5 }, 'registrationGrant'],
    [{ registrationGrant: '100' }, 'registrationGrant'],
    [{ registrationGrant: 10_000_000 }, 'registrationGrant'],
    [{ inviteReward: -5 }, 'inviteReward'],
    [{ invitesPerAddress: 1.5 }, 'invitesPerAddress'],
    [{ a2aModel: 'nobody-has-this' }, 'a2aModel'],
    [{ a2aModel: 'painter' }, 'a2aModel'],
    [{ a2aModel: 42 }, 'a2aModel'],
    [{ a2aModel: '' }, 'a2aModel'],
  ])('refuses %j with 400 naming %s, and keeps what was saved', async (body, field) => {
    const response = await chat.api.put('/api/admin/chat-settings').set(admin).send(body);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_failed');
    const named = new Set(response.body.error.fields.map((f: { field: string }) => f.field));
    expect([...named]).toEqual([field]);
    const settings = await chat.api.get('/api/admin/chat-settings').set(admin).expect(200);
    expect(settings.body).toEqual({ ...DEFAULTS, registrationGrant: 100, a2aModel: null });
  });

  it('is for administrators only', async () => {
    const user = await newUser(chat.api, 'nosy');
    await chat.api.get('/api/admin/chat-settings').set(bearer(user.token)).expect(403);
    await chat.api
      .put('/api/admin/chat-settings')
      .set(bearer(user.token))
      .send({ registrationGrant: 1_000_000 })
      .expect(403);
    await chat.api.get('/api/admin/chat-settings').expect(401);
  });
});
