import {
  ADMIN,
  bearer,
  login,
  newUser,
  resetChatData,
  startChat,
  type ChatHarness,
} from '../testing/chat-harness.fixture.js';

interface Conversation {
  id: string;
  title: string;
  model: string;
}

describe('conversations', () => {
  let chat: ChatHarness;
  let owner: { id: number; token: string };
  let other: { id: number; token: string };

  beforeAll(async () => {
    await resetChatData();
    chat = await startChat();
    const admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
    await chat.api
      .post('/api/admin/models')
      .set(admin)
      .send({ name: 'gpt-4o', open: true })
      .expect(201);
    await chat.api.post('/api/admin/models').set(admin).send({ name: 'gpt-4-all' }).expect(201);
    owner = await newUser(chat.api, 'owner');
    other = await newUser(chat.api, 'other');
  });

  afterAll(async () => {
    await chat.close();
  });

  const create = async (token: string, body: Record<string, unknown>, status = 201) =>
    (await chat.api.post('/api/conversations').set(bearer(token)).send(body).expect(status))
      .body as Conversation & {
      error: { code: string };
    };

  it('creates, lists, renames and deletes conversations', async () => {
    const first = await create(owner.token, { title: 'Trip planning', model: 'gpt-4o' });
    expect(first).toMatchObject({
      title: 'Trip planning',
      model: 'gpt-4o',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const second = await create(owner.token, { model: 'gpt-4o' });
    expect(second.title).toBe('New conversation');

    const renamed = await chat.api
      .patch(`/api/conversations/${first.id}`)
      .set(bearer(owner.token))
      .send({ title: '  Trip to Lisbon  ' })
      .expect(200);
    expect(renamed.body.title).toBe('Trip to Lisbon');

    const list = await chat.api.get('/api/conversations').set(bearer(owner.token)).expect(200);
    expect(list.body.total).toBe(2);
    // The most recently changed first.
    expect((list.body.items as Conversation[]).map((c) => c.id)).toEqual([first.id, second.id]);

    const got = await chat.api
      .get(`/api/conversations/${first.id}`)
      .set(bearer(owner.token))
      .expect(200);
    expect(got.body.title).toBe('Trip to Lisbon');
    const messages = await chat.api
      .get(`/api/conversations/${first.id}/messages`)
      .set(bearer(owner.token))
      .expect(200);
    expect(messages.body).toEqual({ items: [], total: 0 });

    await chat.api.delete(`/api/conversations/${second.id}`).set(bearer(owner.token)).expect(204);
    await chat.api.get(`/api/conversations/${second.id}`).set(bearer(owner.token)).expect(404);
    const after = await chat.api.get('/api/conversations').set(bearer(owner.token)).expect(200);
    expect(after.body.total).toBe(1);
  });

  it("answers another user's conversation exactly like a missing one", async () => {
    const mine = await create(owner.token, { model: 'gpt-4o' });
    const missing = await chat.api
      .get('/api/conversations/00000000-0000-4000-8000-000000000000')
      .set(bearer(other.token))
      .expect(404);
    const theirs = await chat.api
      .get(`/api/conversations/${mine.id}`)
      .set(bearer(other.token))
      .expect(404);
    expect(theirs.body.error.code).toBe('not_found');
    expect(theirs.body.error.message.replace(mine.id, 'ID')).toBe(
      missing.body.error.message.replace('00000000-0000-4000-8000-000000000000', 'ID'),
    );
    const as = bearer(other.token);
    await chat.api.get(`/api/conversations/${mine.id}/messages`).set(as).expect(404);
    await chat.api
      .patch(`/api/conversations/${mine.id}`)
      .set(as)
      .send({ title: 'mine now' })
      .expect(404);
    await chat.api.delete(`/api/conversations/${mine.id}`).set(as).expect(404);
    await chat.api
      .post(`/api/conversations/${mine.id}/messages`)
      .set(as)
      .send({ content: 'hi' })
      .expect(404);
    const list = await chat.api.get('/api/conversations').set(as).expect(200);
    expect((list.body.items as Conversation[]).map((c) => c.id)).not.toContain(mine.id);
    // Still the owner's, unchanged.
    const still = await chat.api
      .get(`/api/conversations/${mine.id}`)
      .set(bearer(owner.token))
      .expect(200);
    expect(still.body.title).toBe('New conversation');
    await chat.api.get('/api/conversations/not-a-uuid').set(bearer(owner.token)).expect(404);
  });

  it('refuses a model the user may not use, with model_not_permitted', async () => {
    const refused = await create(owner.token, { model: 'gpt-4-all' }, 403);
    expect(refused.error.code).toBe('model_not_permitted');
    const unknown = await create(owner.token, { model: 'no-such-model' }, 403);
    expect(unknown.error.code).toBe('model_not_permitted');
    const mine = await create(owner.token, { model: 'gpt-4o' });
    const switched = await chat.api
      .patch(`/api/conversations/${mine.id}`)
      .set(bearer(owner.token))
      .send({ model: 'gpt-4-all' })
      .expect(403);
    expect(switched.body.error.code).toBe('model_not_permitted');
  });

  it('validates titles and paging', async () => {
    await create(owner.token, { model: 'gpt-4o', title: 'x'.repeat(201) }, 400);
    await create(owner.token, { title: 'no model' }, 400);
    await chat.api
      .get('/api/conversations')
      .query({ page: 0 })
      .set(bearer(owner.token))
      .expect(400);
    const paged = await chat.api
      .get('/api/conversations')
      .query({ pageSize: 1 })
      .set(bearer(owner.token))
      .expect(200);
    expect(paged.body.items).toHaveLength(1);
    expect(paged.body.total).toBeGreaterThan(1);
  });
});
