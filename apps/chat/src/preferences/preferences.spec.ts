import {
  bearer,
  newUser,
  resetChatData,
  startChat,
  type ChatHarness,
} from '../testing/chat-harness.fixture.js';

describe('preferences', () => {
  let chat: ChatHarness;

  beforeAll(async () => {
    await resetChatData();
    chat = await startChat({ CUSTOM_ASSISTANT_PREFIX: 'gpt-4-gizmo-' });
  });

  afterAll(async () => {
    await chat.close();
  });

  it('starts with no chosen model and no custom assistants', async () => {
    const user = await newUser(chat.api);
    const response = await chat.api.get('/api/me/preferences').set(bearer(user.token)).expect(200);
    expect(response.body).toEqual({ model: null, customAssistants: [] });
  });

  it('remembers the chosen model on the server, for every session of the user, and forgets it on null', async () => {
    const user = await newUser(chat.api);
    await chat.api
      .patch('/api/me/preferences')
      .set(bearer(user.token))
      .send({ model: 'gpt-4o-mini' })
      .expect(200, { model: 'gpt-4o-mini', customAssistants: [] });
    const other = await newUser(chat.api);
    expect(
      (await chat.api.get('/api/me/preferences').set(bearer(other.token)).expect(200)).body.model,
    ).toBeNull();
    expect(
      (await chat.api.get('/api/me/preferences').set(bearer(user.token)).expect(200)).body.model,
    ).toBe('gpt-4o-mini');
    await chat.api
      .patch('/api/me/preferences')
      .set(bearer(user.token))
      .send({ model: null })
      .expect(200, { model: null, customAssistants: [] });
  });

  it('refuses a model name that is not one, and fields it does not know', async () => {
    const user = await newUser(chat.api);
    const bad = await chat.api
      .patch('/api/me/preferences')
      .set(bearer(user.token))
      .send({ model: 'no spaces <allowed>' })
      .expect(400);
    expect(bad.body.error.code).toBe('validation_failed');
    expect(JSON.stringify(bad.body.error)).toContain('model must be a model name');
    await chat.api
      .patch('/api/me/preferences')
      .set(bearer(user.token))
      .send({ theme: 'dark' })
      .expect(400);
  });

  it('saves a custom assistant from its link to the user, once, and chooses it', async () => {
    const user = await newUser(chat.api);
    const link = 'https://chatgpt.com/g/g-abc123XYZ-travel-guide?model=gpt-4';
    const expected = {
      model: 'gpt-4-gizmo-g-abc123XYZ-travel-guide',
      customAssistants: ['gpt-4-gizmo-g-abc123XYZ-travel-guide'],
    };
    await chat.api
      .post('/api/me/custom-assistants')
      .set(bearer(user.token))
      .send({ link })
      .expect(200, expected);
    await chat.api
      .post('/api/me/custom-assistants')
      .set(bearer(user.token))
      .send({ link })
      .expect(200, expected);
    await chat.api.get('/api/me/preferences').set(bearer(user.token)).expect(200, expected);
  });

  it('explains a link that is not an assistant link, and saves nothing', async () => {
    const user = await newUser(chat.api);
    const response = await chat.api
      .post('/api/me/custom-assistants')
      .set(bearer(user.token))
      .send({ link: 'https://example.com/not-an-assistant' })
      .expect(400);
    expect(response.body.error.code).toBe('invalid_assistant_link');
    await chat.api
      .get('/api/me/preferences')
      .set(bearer(user.token))
      .expect(200, { model: null, customAssistants: [] });
  });

  it('needs a session', async () => {
    await chat.api.get('/api/me/preferences').expect(401);
    await chat.api.patch('/api/me/preferences').send({ model: 'x' }).expect(401);
  });
});
