import {
  ADMIN,
  bearer,
  login,
  newUser,
  resetChatData,
  startChat,
  type ChatHarness,
} from './testing/chat-harness.fixture.js';

// Input a client (or an attacker) can send that once cost a 500 or seconds of CPU: each
// is a 400 naming the field (docs/architecture.md, "Bad input").

interface ErrorBody {
  error: { code: string; message: string; fields?: { field: string; message: string }[] };
}

function fieldsOf(body: unknown): string[] {
  return [...new Set(((body as ErrorBody).error.fields ?? []).map((f) => f.field))];
}

describe('bad input to the chat API', () => {
  let chat: ChatHarness;
  let admin: Record<string, string>;
  let user: Record<string, string>;
  let conversationId: string;
  let modelId: number;

  beforeAll(async () => {
    await resetChatData();
    chat = await startChat();
    admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
    const model = await chat.api
      .post('/api/admin/models')
      .set(admin)
      .send({ name: 'gpt-4o', open: true })
      .expect(201);
    modelId = (model.body as { id: number }).id;
    user = bearer((await newUser(chat.api, 'badinput')).token);
    const conversation = await chat.api
      .post('/api/conversations')
      .set(user)
      .send({ title: 'x', model: 'gpt-4o' })
      .expect(201);
    conversationId = (conversation.body as { id: string }).id;
  });

  afterAll(async () => {
    await chat.close();
  });

  it.each([
    ['an array of 200,000 zeros', '/api/auth/login', new Array(200_000).fill(0)],
    [
      'an object of 50,000 keys',
      '/api/auth/register',
      Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 0])),
    ],
    [
      'a body nested 20,000 levels deep',
      '/api/auth/login',
      '['.repeat(20_000) + ']'.repeat(20_000),
    ],
  ])('refuses %s to a credentials route by its size, with a 413', async (_label, path, body) => {
    const response = await chat.api
      .post(path)
      .set('content-type', 'application/json')
      .send(typeof body === 'string' ? body : JSON.stringify(body))
      .expect(413);
    expect(response.body.error.code).toBe('payload_too_large');
  });

  it.each([
    [
      'a lone surrogate in a username',
      '/api/auth/register',
      { username: 'a\ud800', password: 'a-good-password' },
      'username',
    ],
    [
      'NUL in a password',
      '/api/auth/login',
      { username: 'someone', password: 'pass\u0000word' },
      'password',
    ],
  ])('refuses %s before any session with a 400', async (_label, path, body, field) => {
    const response = await chat.api
      .post(path)
      .send(body as object)
      .expect(400);
    expect(fieldsOf(response.body)).toContain(field);
  });

  it('refuses a body nested 20,000 levels deep with a 400', async () => {
    const response = await chat.api
      .patch(`/api/conversations/${conversationId}`)
      .set(user)
      .set('content-type', 'application/json')
      .send('['.repeat(20_000) + ']'.repeat(20_000))
      .expect(400);
    expect(response.body.error.code).toBe('validation_failed');
  });

  it('refuses NUL in a conversation title and a message, naming them', async () => {
    const title = await chat.api
      .post('/api/conversations')
      .set(user)
      .send({ title: 'a\u0000', model: 'gpt-4o' })
      .expect(400);
    expect(fieldsOf(title.body)).toEqual(['title']);
    const message = await chat.api
      .post(`/api/conversations/${conversationId}/messages`)
      .set(user)
      .send({ content: 'hi\u0000' })
      .expect(400);
    expect(fieldsOf(message.body)).toEqual(['content']);
  });

  it('refuses NUL in a search term and an API key value, naming them', async () => {
    const search = await chat.api.get('/api/admin/users?search=a%00').set(admin).expect(400);
    expect(fieldsOf(search.body)).toEqual(['search']);
    const key = await chat.api
      .post('/api/admin/api-keys')
      .set(admin)
      .send({ platform: 'openai', key: 'sk-\u0000abc' })
      .expect(400);
    expect(fieldsOf(key.body)).toContain('key');
  });

  it.each([
    ['/api/conversations?page=99999999999999999999', 'page'],
    ['/api/conversations?page=1e400', 'page'],
    ['/api/admin/users?page=9007199254740993', 'page'],
  ])('refuses %s with a 400 naming %s', async (path, field) => {
    const response = await chat.api
      .get(path)
      .set(path.includes('admin') ? admin : user)
      .expect(400);
    expect(fieldsOf(response.body)).toEqual([field]);
  });

  it('refuses null for PATCH fields that cannot be null, naming them', async () => {
    const title = await chat.api
      .patch(`/api/conversations/${conversationId}`)
      .set(user)
      .send({ title: null })
      .expect(400);
    expect(fieldsOf(title.body)).toEqual(['title']);
    const model = await chat.api
      .patch(`/api/admin/models/${modelId}`)
      .set(admin)
      .send({ name: null, open: null, platform: null, purpose: null, toolMode: null })
      .expect(400);
    expect(fieldsOf(model.body).sort()).toEqual([
      'name',
      'open',
      'platform',
      'purpose',
      'toolMode',
    ]);
  });

  /**
   * A stall past this means the body was parsed. The defect these tests guard held the
   * loop for 160 ms and more; a loaded CI machine once stretched one turn to 60 ms alone.
   */
  const STALL_LIMIT_MS = 100;

  /** The longest the event loop went without a turn while `work` ran. */
  async function longestStall(work: () => Promise<unknown>): Promise<number> {
    let longest = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 1);
    try {
      await work();
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      clearInterval(ticker);
    }
    return longest;
  }

  // JSON.parse alone of 50,000 keys held the loop for 80 ms and more, then the walk as
  // much again: 0.3-0.5 s on a busy machine, for every such login (docs/reliability.md,
  // "Defects of the edges of the services").
  it('refuses a login of 50,000 keys without holding the event loop', async () => {
    const keys = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 'v']));
    const huge = JSON.stringify({ username: 'a', password: 'b', ...keys });
    let status = 0;
    const stall = await longestStall(async () => {
      const response = await fetch(`${chat.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: huge,
      });
      status = response.status;
      await response.arrayBuffer();
    });
    expect({ status, stalled: stall < STALL_LIMIT_MS ? 'no' : `${Math.round(stall)} ms` }).toEqual({
      status: 413,
      stalled: 'no',
    });
  });

  it('refuses 50,000 keys on a route with a large limit by their count, before parsing them', async () => {
    const keys = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 'v']));
    const huge = JSON.stringify({ title: 'a', ...keys });
    let answer: { status: number; body: ErrorBody } | undefined;
    const stall = await longestStall(async () => {
      const response = await fetch(`${chat.url}/api/conversations/${conversationId}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', ...user },
        body: huge,
      });
      answer = { status: response.status, body: (await response.json()) as ErrorBody };
    });
    expect(answer?.status).toBe(400);
    expect(answer?.body.error.code).toBe('validation_failed');
    expect(fieldsOf(answer?.body)).toEqual(['body']);
    expect(stall < STALL_LIMIT_MS ? 'no' : `${Math.round(stall)} ms`).toBe('no');
  });
});
