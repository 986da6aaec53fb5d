import {
  ADMIN,
  bearer,
  login,
  newUser,
  resetChatData,
  startChat,
  type ChatHarness,
} from '../testing/chat-harness.fixture.js';

interface AdminUser {
  id: number;
  username: string;
  disabled: boolean;
  usage: { requests: number; promptTokens: number; completionTokens: number; totalTokens: number };
}

describe('admin: users', () => {
  let chat: ChatHarness;
  let admin: Record<string, string>;
  let adminId: number;

  beforeAll(async () => {
    await resetChatData();
    chat = await startChat();
    admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
    adminId = (await chat.api.get('/api/auth/me').set(admin).expect(200)).body.id as number;
    for (const name of ['carol', 'carla', 'dave']) {
      await chat.api
        .post('/api/auth/register')
        .send({ username: name, password: 'password-123', email: `${name}@mail.example` })
        .expect(201);
    }
    await chat.api.post('/api/admin/models').set(admin).send({ name: 'gpt-4o' }).expect(201);
  });

  afterAll(async () => {
    await chat.close();
  });

  it('lists users with their usage totals, searched by name or email and paged', async () => {
    const all = await chat.api.get('/api/admin/users').set(admin).expect(200);
    expect(all.body.total).toBe(4);
    const carol = (all.body.items as AdminUser[]).find((u) => u.username === 'carol');
    expect(carol).toMatchObject({
      disabled: false,
      usage: { requests: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      plan: null,
    });
    expect(carol).not.toHaveProperty('passwordHash');

    const car = await chat.api
      .get('/api/admin/users')
      .query({ search: 'CAR' })
      .set(admin)
      .expect(200);
    expect(car.body.total).toBe(2);
    expect((car.body.items as AdminUser[]).map((u) => u.username).sort()).toEqual([
      'carla',
      'carol',
    ]);
    const byEmail = await chat.api
      .get('/api/admin/users')
      .query({ search: 'dave@mail' })
      .set(admin)
      .expect(200);
    expect((byEmail.body.items as AdminUser[]).map((u) => u.username)).toEqual(['dave']);

    const first = await chat.api
      .get('/api/admin/users')
      .query({ page: 1, pageSize: 3 })
      .set(admin)
      .expect(200);
    const second = await chat.api
      .get('/api/admin/users')
      .query({ page: 2, pageSize: 3 })
      .set(admin)
      .expect(200);
    expect(first.body.items).toHaveLength(3);
    expect(second.body.items).toHaveLength(1);
    expect(second.body.total).toBe(4);
    const ids = [...first.body.items, ...second.body.items].map((u: AdminUser) => u.id);
    expect(new Set(ids).size).toBe(4);

    await chat.api.get('/api/admin/users').query({ pageSize: 1000 }).set(admin).expect(400);
  });

  it('refuses permissions for models that do not exist', async () => {
    const user = await newUser(chat.api);
    const response = await chat.api
      .patch(`/api/admin/users/${user.id}`)
      .set(admin)
      .send({ modelPermissions: ['gpt-4o', 'no-such-model'] })
      .expect(400);
    expect(response.body.error.message).toContain('no-such-model');
    expect(response.body.error.fields[0].field).toBe('modelPermissions');
  });

  it('does not let an administrator disable themselves', async () => {
    const response = await chat.api
      .patch(`/api/admin/users/${adminId}`)
      .set(admin)
      .send({ disabled: true })
      .expect(409);
    expect(response.body.error.code).toBe('conflict');
  });

  it('answers 404 for a user that does not exist', async () => {
    await chat.api.patch('/api/admin/users/999999').set(admin).send({ disabled: true }).expect(404);
  });

  it('refuses the user list to a user', async () => {
    const user = await newUser(chat.api);
    const response = await chat.api.get('/api/admin/users').set(bearer(user.token)).expect(403);
    expect(response.body.error.code).toBe('forbidden');
  });
});
