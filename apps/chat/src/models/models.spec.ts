import {
  ADMIN,
  bearer,
  login,
  newUser,
  resetChatData,
  startChat,
  type ChatHarness,
} from '../testing/chat-harness.fixture.js';

describe('models', () => {
  let chat: ChatHarness;
  let admin: Record<string, string>;

  const addModel = async (body: Record<string, unknown>) =>
    (await chat.api.post('/api/admin/models').set(admin).send(body).expect(201)).body as {
      id: number;
      name: string;
    };

  const visibleTo = async (token: string) =>
    (
      (await chat.api.get('/api/models').set(bearer(token)).expect(200)).body.items as {
        name: string;
      }[]
    ).map((model) => model.name);

  beforeAll(async () => {
    await resetChatData();
    chat = await startChat({ CUSTOM_ASSISTANT_PREFIX: 'gpt-4-gizmo-' });
    admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
    await addModel({ name: 'gpt-4o', open: true });
    await addModel({ name: 'gpt-4-all', purpose: 'chat' });
    await addModel({ name: 'dall-e-3', purpose: 'drawing' });
    await addModel({ name: 'suno-v3', purpose: 'music', platform: 'openai' });
    await addModel({ name: 'gpt-4-gizmo-g-abc123XYZ-travel-guide' });
  });

  afterAll(async () => {
    await chat.close();
  });

  it('lists only open models to a user without permissions; the others are simply absent', async () => {
    const user = await newUser(chat.api);
    expect(await visibleTo(user.token)).toEqual(['gpt-4o']);
  });

  it('adds the models a user is permitted, and removes them with the permission', async () => {
    const user = await newUser(chat.api);
    const granted = await chat.api
      .patch(`/api/admin/users/${user.id}`)
      .set(admin)
      .send({ modelPermissions: ['gpt-4-all', 'dall-e-3', 'gpt-4-all'] })
      .expect(200);
    expect(granted.body.modelPermissions).toEqual(['gpt-4-all', 'dall-e-3']);
    expect(await visibleTo(user.token)).toEqual(['gpt-4-all', 'gpt-4o', 'dall-e-3']);
    const models = (await chat.api.get('/api/models').set(bearer(user.token)).expect(200)).body;
    expect(models.total).toBe(3);
    expect(models.items).toContainEqual({
      name: 'dall-e-3',
      platform: 'openai',
      purpose: 'drawing',
      toolMode: 'off',
      contextTokens: null,
      vision: false,
      // Unpriced models are free (docs/credits.md, "Prices").
      creditsPerCall: 0,
      creditsPer1kInput: 0,
      creditsPer1kOutput: 0,
    });

    await chat.api
      .patch(`/api/admin/users/${user.id}`)
      .set(admin)
      .send({ modelPermissions: [] })
      .expect(200);
    expect(await visibleTo(user.token)).toEqual(['gpt-4o']);
  });

  it('shows every model to an administrator, chat models first, then drawing and music', async () => {
    expect(await visibleTo(admin.authorization!.slice(7))).toEqual([
      'gpt-4-all',
      'gpt-4-gizmo-g-abc123XYZ-travel-guide',
      'gpt-4o',
      'dall-e-3',
      'suno-v3',
    ]);
  });

  it('opens a model to everyone with the switch', async () => {
    const user = await newUser(chat.api);
    const music = (await chat.api.get('/api/admin/models').set(admin).expect(200)).body.items.find(
      (m: { name: string }) => m.name === 'suno-v3',
    ) as { id: number };
    const opened = await chat.api
      .patch(`/api/admin/models/${music.id}`)
      .set(admin)
      .send({ open: true })
      .expect(200);
    expect(opened.body).toMatchObject({
      name: 'suno-v3',
      purpose: 'music',
      open: true,
      platform: 'openai',
    });
    expect(await visibleTo(user.token)).toContain('suno-v3');
    await chat.api
      .patch(`/api/admin/models/${music.id}`)
      .set(admin)
      .send({ open: false })
      .expect(200);
    expect(await visibleTo(user.token)).not.toContain('suno-v3');
  });

  it('refuses a duplicate name, another platform, and a bad purpose', async () => {
    const duplicate = await chat.api
      .post('/api/admin/models')
      .set(admin)
      .send({ name: 'gpt-4o' })
      .expect(409);
    expect(duplicate.body.error.code).toBe('conflict');
    const platform = await chat.api
      .post('/api/admin/models')
      .set(admin)
      .send({ name: 'claude-3', platform: 'anthropic' })
      .expect(400);
    expect(platform.body.error.fields[0]).toMatchObject({ field: 'platform' });
    expect(platform.body.error.fields[0].message).toMatch(/put other platforms behind the gateway/);
    await chat.api
      .post('/api/admin/models')
      .set(admin)
      .send({ name: 'x', purpose: 'video' })
      .expect(400);
    await chat.api.post('/api/admin/models').set(admin).send({ name: 'has space' }).expect(400);
  });

  it('sets how a model reaches tools: off by default, native or prompt, nothing else', async () => {
    const model = await addModel({ name: 'tool-user' });
    expect(model).toMatchObject({ toolMode: 'off' });
    const changed = await chat.api
      .patch(`/api/admin/models/${model.id}`)
      .set(admin)
      .send({ toolMode: 'prompt' })
      .expect(200);
    expect(changed.body.toolMode).toBe('prompt');
    const refused = await chat.api
      .post('/api/admin/models')
      .set(admin)
      .send({ name: 'tool-user-2', toolMode: 'always' })
      .expect(400);
    expect(refused.body.error.fields).toEqual([
      { field: 'toolMode', message: 'toolMode must be one of off, native, prompt' },
    ]);
  });

  it("keeps a model's context window, unknown by default, shown to users, and clears it with null", async () => {
    const model = await addModel({ name: 'long-context' });
    expect(model).toMatchObject({ contextTokens: null });
    const user = await newUser(chat.api);
    const set = await chat.api
      .patch(`/api/admin/models/${model.id}`)
      .set(admin)
      .send({ contextTokens: 128000, open: true })
      .expect(200);
    expect(set.body.contextTokens).toBe(128000);
    const listed = (await chat.api.get('/api/models').set(bearer(user.token)).expect(200)).body
      .items as { name: string; contextTokens: number | null }[];
    expect(listed.find((m) => m.name === 'long-context')?.contextTokens).toBe(128000);
    for (const bad of [0, 1.5, 10_000_001, '8k']) {
      const refused = await chat.api
        .patch(`/api/admin/models/${model.id}`)
        .set(admin)
        .send({ contextTokens: bad })
        .expect(400);
      expect(refused.body.error.fields[0].field).toBe('contextTokens');
    }
    const cleared = await chat.api
      .patch(`/api/admin/models/${model.id}`)
      .set(admin)
      .send({ contextTokens: null })
      .expect(200);
    expect(cleared.body.contextTokens).toBeNull();
  });

  it('says whether a model reads images, no by default, shown to users', async () => {
    const model = await addModel({ name: 'sighted' });
    expect(model).toMatchObject({ vision: false });
    const user = await newUser(chat.api);
    const set = await chat.api
      .patch(`/api/admin/models/${model.id}`)
      .set(admin)
      .send({ vision: true, open: true })
      .expect(200);
    expect(set.body.vision).toBe(true);
    const listed = (await chat.api.get('/api/models').set(bearer(user.token)).expect(200)).body
      .items as { name: string; vision: boolean }[];
    expect(listed.find((m) => m.name === 'sighted')?.vision).toBe(true);
    const refused = await chat.api
      .patch(`/api/admin/models/${model.id}`)
      .set(admin)
      .send({ vision: 'yes' })
      .expect(400);
    expect(refused.body.error.fields[0].field).toBe('vision');
  });

  it('deletes a model; a missing one is 404', async () => {
    const model = await addModel({ name: 'to-delete' });
    await chat.api.delete(`/api/admin/models/${model.id}`).set(admin).expect(204);
    const again = await chat.api.delete(`/api/admin/models/${model.id}`).set(admin).expect(404);
    expect(again.body.error.code).toBe('not_found');
    await chat.api
      .patch('/api/admin/models/not-a-number')
      .set(admin)
      .send({ open: true })
      .expect(404);
  });

  describe('custom assistant links', () => {
    it.each([
      [
        'https://chatgpt.com/g/g-abc123XYZ-travel-guide?model=gpt-4',
        'gpt-4-gizmo-g-abc123XYZ-travel-guide',
      ],
      ['https://chatgpt.com/g/g-abc123XYZ-travel-guide', 'gpt-4-gizmo-g-abc123XYZ-travel-guide'],
      [
        'https://chat.openai.com/g/g-2fkFE8rbu-dall-e/?utm=x#frag',
        'gpt-4-gizmo-g-2fkFE8rbu-dall-e',
      ],
    ])('turns %s into %s', async (link, model) => {
      const user = await newUser(chat.api);
      const response = await chat.api
        .post('/api/models/from-link')
        .set(bearer(user.token))
        .send({ link })
        .expect(200);
      expect(response.body).toEqual({ model });
    });

    it.each([
      ['https://chatgpt.com/gpts', /no \/g\/ segment/],
      ['https://chatgpt.com/?g=g-abc123', /no \/g\/ segment/],
      ['https://chatgpt.com/g/travel-guide?model=gpt-4', /does not start with g-/],
      ['chatgpt.com/g/g-abc', /not a valid URL/],
    ])('refuses %s with a clear message', async (link, reason) => {
      const response = await chat.api
        .post('/api/models/from-link')
        .set(admin)
        .send({ link })
        .expect(400);
      expect(response.body.error.code).toBe('invalid_assistant_link');
      expect(response.body.error.message).toMatch(reason);
    });
  });
});
