import { SecretCipher, generateSecretKeySpec } from '@switchyard/security';
import { waitFor, query } from '@switchyard/testing';
import {
  ADMIN,
  bearer,
  login,
  newUser,
  parseEvents,
  resetChatData,
  sendMessage,
  startChat,
  startMockUpstream,
  type ChatHarness,
  type MockUpstream,
} from '../testing/chat-harness.fixture.js';

// Replies through real upstream calls: the chat app in process, a real mock-upstream
// process as the provider, scripted per account key through its control API.

interface StoredMessage {
  id: number;
  role: string;
  content: string;
  imageUrls: string[];
  model: string;
  status: string;
  errorCode: string | null;
  usage: { promptTokens: number; completionTokens: number };
}

const KEYS = ['sk-mock-a', 'sk-mock-b', 'sk-mock-c', 'sk-mock-draw'];
/** Nothing listens on the discard port: connections are refused at once. */
const CLOSED = 'http://127.0.0.1:9';
const TIMEOUT_MS = 1500;

describe('sending messages', () => {
  let chat: ChatHarness;
  let mock: MockUpstream;
  let admin: Record<string, string>;
  let user: { id: number; username: string; token: string };

  /** Replaces every API key record with these. */
  const useRecords = async (
    records: { key: string; purpose?: string; address?: string; enabled?: boolean }[],
  ): Promise<number[]> => {
    const existing = await chat.api.get('/api/admin/api-keys').set(admin).expect(200);
    for (const record of existing.body.items as { id: number }[]) {
      await chat.api.delete(`/api/admin/api-keys/${record.id}`).set(admin).expect(204);
    }
    const ids: number[] = [];
    for (const record of records) {
      const created = await chat.api
        .post('/api/admin/api-keys')
        .set(admin)
        .send({ address: mock.url, purpose: 'chat', ...record })
        .expect(201);
      ids.push(created.body.id as number);
    }
    return ids;
  };

  const newConversation = async (model = 'gpt-4o', token = user.token): Promise<string> =>
    (await chat.api.post('/api/conversations').set(bearer(token)).send({ model }).expect(201)).body
      .id as string;

  const storedMessages = async (conversationId: string, token = user.token) =>
    (
      await chat.api
        .get(`/api/conversations/${conversationId}/messages`)
        .set(bearer(token))
        .expect(200)
    ).body.items as StoredMessage[];

  beforeAll(async () => {
    await resetChatData();
    mock = await startMockUpstream(KEYS);
    chat = await startChat({ CHAT_UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) });
    admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
    for (const model of [
      { name: 'gpt-4o', open: true },
      { name: 'gpt-4-all', open: false },
      { name: 'dall-e-3', purpose: 'drawing', open: true },
      { name: 'suno-v3', purpose: 'music', open: true },
    ]) {
      await chat.api.post('/api/admin/models').set(admin).send(model).expect(201);
    }
    user = await newUser(chat.api, 'sender');
  });

  afterAll(async () => {
    await chat?.close();
    await mock?.stop();
  });

  beforeEach(async () => {
    await mock.reset();
  });

  describe('a streamed reply', () => {
    beforeAll(async () => {
      await useRecords([{ key: 'sk-mock-a' }]);
    });

    it('arrives in several delta events and both messages are saved with the usage', async () => {
      const conversationId = await newConversation();
      const reply = await sendMessage(chat, user.token, conversationId, {
        content: 'tell me about the sea',
      });
      expect(reply.status).toBe(200);
      expect(reply.contentType).toMatch(/^text\/event-stream/);

      const deltas = reply.events.filter((e) => e.event === 'delta');
      expect(deltas.length).toBeGreaterThan(2);
      const text = deltas.map((e) => e.data.content).join('');
      expect(text).toBe('Echo: tell me about the sea');
      const done = reply.events.at(-1)!;
      expect(done.event).toBe('done');
      expect(reply.events.filter((e) => e.event === 'done')).toHaveLength(1);
      const usage = done.data.usage as { promptTokens: number; completionTokens: number };
      expect(usage.promptTokens).toBeGreaterThan(0);
      expect(usage.completionTokens).toBeGreaterThan(0);

      const [question, answer] = await storedMessages(conversationId);
      expect(question).toMatchObject({
        role: 'user',
        content: 'tell me about the sea',
        status: 'complete',
      });
      expect(answer).toMatchObject({
        id: done.data.messageId,
        role: 'assistant',
        content: text,
        model: 'gpt-4o',
        status: 'complete',
        errorCode: null,
        usage,
      });
    });

    it('takes a conversation back to before a message, so a reply is regenerated or a question edited', async () => {
      const conversationId = await newConversation();
      await sendMessage(chat, user.token, conversationId, { content: 'first question' });
      await sendMessage(chat, user.token, conversationId, { content: 'second question' });
      const [, , secondQuestion, secondAnswer] = await storedMessages(conversationId);

      // Regenerate: the last reply goes, then the same question is asked again.
      await chat.api
        .delete(`/api/conversations/${conversationId}/messages?from=${secondAnswer!.id}`)
        .set(bearer(user.token))
        .expect(204);
      expect((await storedMessages(conversationId)).map((m) => m.content)).toEqual([
        'first question',
        'Echo: first question',
        'second question',
      ]);

      // Edit and resend: the question goes with everything after it.
      await chat.api
        .delete(`/api/conversations/${conversationId}/messages?from=${secondQuestion!.id}`)
        .set(bearer(user.token))
        .expect(204);
      await sendMessage(chat, user.token, conversationId, { content: 'second, edited' });
      expect((await storedMessages(conversationId)).map((m) => m.content)).toEqual([
        'first question',
        'Echo: first question',
        'second, edited',
        'Echo: second, edited',
      ]);
    });

    it("refuses to delete another user's messages, a message of another conversation, or no message", async () => {
      const conversationId = await newConversation();
      await sendMessage(chat, user.token, conversationId, { content: 'mine' });
      const [question] = await storedMessages(conversationId);
      const stranger = await newUser(chat.api, 'stranger');
      const notYours = await chat.api
        .delete(`/api/conversations/${conversationId}/messages?from=${question!.id}`)
        .set(bearer(stranger.token))
        .expect(404);
      expect(notYours.body.error.code).toBe('not_found');

      const other = await newConversation();
      const elsewhere = await chat.api
        .delete(`/api/conversations/${other}/messages?from=${question!.id}`)
        .set(bearer(user.token))
        .expect(404);
      expect(elsewhere.body.error.message).toContain(`No message ${question!.id}`);

      for (const from of ['', 'abc', '0', '99999999999999999999']) {
        const bad = await chat.api
          .delete(`/api/conversations/${conversationId}/messages?from=${from}`)
          .set(bearer(user.token))
          .expect(400);
        expect(bad.body.error.code).toBe('validation_failed');
      }
      expect(await storedMessages(conversationId)).toHaveLength(2);
    });

    it('writes each piece as it comes, not when the reply is over', async () => {
      await mock.fault('sk-mock-a', { chunkDelayMs: 150 }, 1);
      const conversationId = await newConversation();
      const response = await fetch(`${chat.url}/api/conversations/${conversationId}/messages`, {
        method: 'POST',
        headers: { ...bearer(user.token), 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'one two three four five' }),
      });
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let received = '';
      while (!received.includes('event: delta')) {
        const { value, done } = await reader.read();
        if (done) break;
        received += decoder.decode(value, { stream: true });
      }
      // The first piece is here while the upstream is still writing the rest.
      expect(received).toContain('event: delta');
      expect(received).not.toContain('event: done');
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        received += decoder.decode(value, { stream: true });
      }
      expect(parseEvents(received).at(-1)?.event).toBe('done');
    });

    it('sends the conversation so far with each new message, and asks for the usage', async () => {
      const conversationId = await newConversation();
      const first = await sendMessage(chat, user.token, conversationId, { content: 'a' });
      const second = await sendMessage(chat, user.token, conversationId, { content: 'b' });
      const firstUsage = first.events.at(-1)!.data.usage as { promptTokens: number };
      const secondUsage = second.events.at(-1)!.data.usage as { promptTokens: number };
      // The mock counts the prompt of every message it is sent: a, "Echo: a", b.
      expect(secondUsage.promptTokens).toBeGreaterThan(firstUsage.promptTokens + 1);
      expect((await storedMessages(conversationId)).map((m) => m.content)).toEqual([
        'a',
        'Echo: a',
        'b',
        'Echo: b',
      ]);
    });

    it('pages the messages oldest first, with the total over all pages', async () => {
      const conversationId = await newConversation();
      for (const content of ['a', 'b', 'c']) {
        await sendMessage(chat, user.token, conversationId, { content });
      }
      const page = async (query: Record<string, number>) =>
        (
          await chat.api
            .get(`/api/conversations/${conversationId}/messages`)
            .query(query)
            .set(bearer(user.token))
            .expect(200)
        ).body as { items: StoredMessage[]; total: number };
      const second = await page({ page: 2, pageSize: 4 });
      expect(second.total).toBe(6);
      expect(second.items.map((m) => m.content)).toEqual(['c', 'Echo: c']);
      expect((await page({ page: 3, pageSize: 4 })).items).toEqual([]);
      for (const query of [{ pageSize: 201 }, { pageSize: 0 }, { page: 0 }]) {
        const refused = await chat.api
          .get(`/api/conversations/${conversationId}/messages`)
          .query(query)
          .set(bearer(user.token))
          .expect(400);
        expect(refused.body.error.code).toBe('validation_failed');
      }
    });

    it('adds each reply to the user totals, which administrators see in the user list', async () => {
      const someone = await newUser(chat.api, 'counted');
      const conversationId = await newConversation('gpt-4o', someone.token);
      const replies = [];
      for (const content of ['first question', 'second question']) {
        replies.push(await sendMessage(chat, someone.token, conversationId, { content }));
      }
      const expected = replies
        .map(
          (r) => r.events.at(-1)!.data.usage as { promptTokens: number; completionTokens: number },
        )
        .reduce((sum, u) => ({
          promptTokens: sum.promptTokens + u.promptTokens,
          completionTokens: sum.completionTokens + u.completionTokens,
        }));
      const totals = await chat.api.get('/api/usage').set(bearer(someone.token)).expect(200);
      expect(totals.body).toEqual({
        requests: 2,
        ...expected,
        totalTokens: expected.promptTokens + expected.completionTokens,
      });
      // Deleting the conversation does not erase what was used.
      await chat.api
        .delete(`/api/conversations/${conversationId}`)
        .set(bearer(someone.token))
        .expect(204);
      const listed = await chat.api
        .get('/api/admin/users')
        .query({ search: someone.username })
        .set(admin)
        .expect(200);
      expect(listed.body.items[0].usage).toEqual(totals.body);
      // Nor what was used per day: today holds both replies, the days before hold nothing.
      const daily = await chat.api
        .get('/api/usage/daily')
        .query({ days: 3 })
        .set(bearer(someone.token))
        .expect(200);
      const today = new Date().toISOString().slice(0, 10);
      const body = daily.body as { items: { day: string; requests: number }[] };
      expect(body.items.map((item) => item.day)).toEqual([
        new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10),
        new Date(Date.now() - 86_400_000).toISOString().slice(0, 10),
        today,
      ]);
      expect(body.items[2]).toEqual({ day: today, ...totals.body });
      expect(body.items.slice(0, 2).map((item) => item.requests)).toEqual([0, 0]);
      const tooLong = await chat.api
        .get('/api/usage/daily')
        .query({ days: 367 })
        .set(bearer(someone.token))
        .expect(400);
      expect(tooLong.body).toMatchObject({ error: { code: 'validation_failed' } });
    });

    it('uses the model given with the message when the user may use it', async () => {
      const conversationId = await newConversation();
      const refused = await sendMessage(chat, user.token, conversationId, {
        content: 'hi',
        model: 'gpt-4-all',
      });
      expect(refused.status).toBe(403);
      expect(refused.json).toMatchObject({ error: { code: 'model_not_permitted' } });
      expect(await storedMessages(conversationId)).toEqual([]);

      await chat.api
        .patch(`/api/admin/users/${user.id}`)
        .set(admin)
        .send({ modelPermissions: ['gpt-4-all'] })
        .expect(200);
      const reply = await sendMessage(chat, user.token, conversationId, {
        content: 'hi',
        model: 'gpt-4-all',
      });
      expect(reply.events.at(-1)?.event).toBe('done');
      expect((await storedMessages(conversationId)).map((m) => m.model)).toEqual([
        'gpt-4-all',
        'gpt-4-all',
      ]);
    });

    it('refuses an empty message before anything is saved', async () => {
      const conversationId = await newConversation();
      const reply = await sendMessage(chat, user.token, conversationId, { content: '' });
      expect(reply.status).toBe(400);
      expect(reply.json).toMatchObject({ error: { code: 'validation_failed' } });
      expect(await storedMessages(conversationId)).toEqual([]);
    });
  });

  describe('the errors of docs/specification.md, "Errors"', () => {
    beforeAll(async () => {
      await useRecords([{ key: 'sk-mock-a' }]);
    });

    it('upstream failed: names the provider address, and saves the failure', async () => {
      await mock.fault('sk-mock-a', { status: 500 }, 1);
      const conversationId = await newConversation();
      const reply = await sendMessage(chat, user.token, conversationId, { content: 'hello' });
      expect(reply.status).toBe(200);
      expect(reply.events).toHaveLength(1);
      const [error] = reply.events;
      expect(error).toMatchObject({
        event: 'error',
        data: { code: 'upstream_failed', address: mock.url },
      });
      expect(error!.data.message).toContain(mock.url);
      expect(error!.data.message).toMatch(/report it to the provider/);
      const [question, answer] = await storedMessages(conversationId);
      expect(question).toMatchObject({ role: 'user', content: 'hello' });
      expect(answer).toMatchObject({
        id: error!.data.messageId,
        status: 'failed',
        errorCode: 'upstream_failed',
        content: '',
      });
    });

    it('timeout: says so when the upstream does not answer in time', async () => {
      await mock.fault('sk-mock-a', { hang: true }, 1);
      const conversationId = await newConversation();
      const reply = await sendMessage(chat, user.token, conversationId, { content: 'hello' });
      expect(reply.events.at(-1)).toMatchObject({
        event: 'error',
        data: { code: 'upstream_timeout', address: mock.url },
      });
      expect(reply.events.at(-1)!.data.message).toMatch(/did not answer within 2 s/);
      expect((await storedMessages(conversationId))[1]).toMatchObject({
        status: 'failed',
        errorCode: 'upstream_timeout',
      });
    });

    it('timeout: also when a stream has started and then goes silent', async () => {
      // The headers and the first (empty) chunk arrive at once; the next one far too late.
      // The client's own timeout ends with the headers: the idle watchdog must catch this.
      await mock.fault('sk-mock-a', { chunkDelayMs: TIMEOUT_MS * 4 }, 1);
      const conversationId = await newConversation();
      const reply = await sendMessage(chat, user.token, conversationId, { content: 'one two' });
      expect(reply.events).toHaveLength(1);
      expect(reply.events[0]).toMatchObject({ event: 'error', data: { code: 'upstream_timeout' } });
      expect((await storedMessages(conversationId))[1]).toMatchObject({
        status: 'failed',
        errorCode: 'upstream_timeout',
      });
    });

    it('no available channel: suggests retrying later', async () => {
      await mock.fault('sk-mock-a', { status: 503 }, 1);
      const conversationId = await newConversation();
      const reply = await sendMessage(chat, user.token, conversationId, { content: 'hello' });
      expect(reply.events.at(-1)).toMatchObject({
        event: 'error',
        data: { code: 'no_available_channel', address: mock.url },
      });
      expect(reply.events.at(-1)!.data.message).toMatch(/retry later/i);
    });

    it('a reply cut half-way is kept as partial, with the error', async () => {
      await mock.fault('sk-mock-a', { disconnectAfterChunks: 3 }, 1);
      const conversationId = await newConversation();
      const reply = await sendMessage(chat, user.token, conversationId, {
        content: 'one two three four five six',
      });
      const deltas = reply.events.filter((e) => e.event === 'delta');
      expect(deltas.length).toBeGreaterThan(0);
      expect(reply.events.at(-1)).toMatchObject({
        event: 'error',
        data: { code: 'upstream_failed' },
      });
      const answer = (await storedMessages(conversationId))[1]!;
      expect(answer).toMatchObject({ status: 'partial', errorCode: 'upstream_failed' });
      expect(answer.content).toBe(deltas.map((e) => e.data.content).join(''));
    });

    it('model not permitted: a JSON 403 before any stream', async () => {
      const conversationId = await newConversation();
      const outsider = await newUser(chat.api, 'outsider');
      const own = await newConversation('gpt-4o', outsider.token);
      const reply = await sendMessage(chat, outsider.token, own, {
        content: 'hi',
        model: 'gpt-4-all',
      });
      expect(reply.status).toBe(403);
      expect(reply.json).toMatchObject({ error: { code: 'model_not_permitted' } });
      expect(reply.events).toEqual([]);
      void conversationId;
    });

    it('an upstream refusal (4xx) is not retried on another record', async () => {
      await useRecords([{ key: 'sk-not-in-the-pool' }, { key: 'sk-mock-b' }]);
      try {
        const conversationId = await newConversation();
        const outcomes = [];
        for (let i = 0; i < 2; i += 1) {
          const reply = await sendMessage(chat, user.token, conversationId, { content: 'hi' });
          outcomes.push(reply.events.at(-1)!);
        }
        // One request started on each record: the refused key is not followed by the good one.
        expect(outcomes.map((e) => e.event).sort()).toEqual(['done', 'error']);
        const refused = outcomes.find((e) => e.event === 'error')!;
        expect(refused.data).toMatchObject({ code: 'upstream_failed', address: mock.url });
        expect(refused.data.message).toMatch(/HTTP 401/);
        expect((await mock.requests())['sk-mock-b']).toBe(1);
      } finally {
        await useRecords([{ key: 'sk-mock-a' }]);
      }
    });
  });

  describe('round-robin over API key records', () => {
    it('spreads requests evenly over the enabled records and skips a disabled one', async () => {
      await useRecords([
        { key: 'sk-mock-a' },
        { key: 'sk-mock-b' },
        { key: 'sk-mock-c', enabled: false },
      ]);
      const conversationId = await newConversation();
      for (let i = 0; i < 6; i += 1) {
        const reply = await sendMessage(chat, user.token, conversationId, { content: `q${i}` });
        expect(reply.events.at(-1)?.event).toBe('done');
      }
      expect(await mock.requests()).toMatchObject({
        'sk-mock-a': 3,
        'sk-mock-b': 3,
        'sk-mock-c': 0,
      });
    });

    it('takes a re-enabled record back into the rotation', async () => {
      const [, , c] = await useRecords([
        { key: 'sk-mock-a' },
        { key: 'sk-mock-b' },
        { key: 'sk-mock-c', enabled: false },
      ]);
      await chat.api
        .patch(`/api/admin/api-keys/${c}`)
        .set(admin)
        .send({ enabled: true })
        .expect(200);
      const conversationId = await newConversation();
      for (let i = 0; i < 6; i += 1)
        await sendMessage(chat, user.token, conversationId, { content: `q${i}` });
      expect(await mock.requests()).toMatchObject({
        'sk-mock-a': 2,
        'sk-mock-b': 2,
        'sk-mock-c': 2,
      });
    });

    it.each([
      ['a timeout', { hang: true }],
      ['no available channel (503)', { status: 503 }],
      ['a rate limit (429)', { status: 429 }],
    ])('skips a record that fails with %s and answers from the next', async (_what, fault) => {
      await useRecords([{ key: 'sk-mock-a' }, { key: 'sk-mock-b' }]);
      await mock.fault('sk-mock-a', fault);
      const conversationId = await newConversation();
      for (let i = 0; i < 2; i += 1) {
        const reply = await sendMessage(chat, user.token, conversationId, { content: `q${i}` });
        expect(reply.events.at(-1)?.event).toBe('done');
        expect(reply.events.some((e) => e.event === 'error')).toBe(false);
      }
      // Both requests reached b; a was tried once (when the rotation started there), never twice.
      const requests = await mock.requests();
      expect(requests['sk-mock-b']).toBe(2);
      expect(requests['sk-mock-a']).toBe(1);
      const messages = await storedMessages(conversationId);
      expect(messages.map((m) => m.status)).toEqual([
        'complete',
        'complete',
        'complete',
        'complete',
      ]);
    });

    it('skips a record whose address refuses connections', async () => {
      await useRecords([{ key: 'sk-mock-a', address: CLOSED }, { key: 'sk-mock-b' }]);
      const conversationId = await newConversation();
      for (let i = 0; i < 2; i += 1) {
        const reply = await sendMessage(chat, user.token, conversationId, { content: `q${i}` });
        expect(reply.events.at(-1)?.event).toBe('done');
      }
      expect((await mock.requests())['sk-mock-b']).toBe(2);
    });

    it('tries each record once, then reports the last failure', async () => {
      await useRecords([
        { key: 'sk-mock-a' },
        { key: 'sk-mock-b', address: CLOSED },
        { key: 'sk-mock-c' },
      ]);
      await mock.fault('*', { status: 503 });
      const conversationId = await newConversation();
      const reply = await sendMessage(chat, user.token, conversationId, { content: 'hi' });
      const error = reply.events.at(-1)!;
      expect(error.event).toBe('error');
      expect(['no_available_channel', 'upstream_failed']).toContain(error.data.code);
      expect(await mock.requests()).toMatchObject({ 'sk-mock-a': 1, 'sk-mock-c': 1 });
    });

    it('answers 503 no_api_key when every record of the purpose is disabled', async () => {
      await useRecords([{ key: 'sk-mock-a', enabled: false }]);
      const conversationId = await newConversation();
      const reply = await sendMessage(chat, user.token, conversationId, { content: 'hi' });
      expect(reply.status).toBe(503);
      expect(reply.json).toMatchObject({ error: { code: 'no_api_key' } });
      expect((reply.json as { error: { message: string } }).error.message).toMatch(
        /purpose "chat"/,
      );
    });

    it('answers 503 no_api_key, saying why, when no key can be decrypted', async () => {
      const [id] = await useRecords([{ key: 'sk-mock-a' }]);
      const foreign = new SecretCipher([generateSecretKeySpec('other')]).seal('sk-mock-a');
      await query(
        process.env.DATABASE_URL!,
        'UPDATE "ApiKeyRecord" SET "keyCiphertext" = $1 WHERE id = $2',
        [foreign, id],
      );
      const conversationId = await newConversation();
      const reply = await sendMessage(chat, user.token, conversationId, { content: 'hi' });
      expect(reply.status).toBe(503);
      expect((reply.json as { error: { message: string } }).error.message).toMatch(
        /cannot be decrypted/,
      );
    });
  });

  describe('drawing', () => {
    it('calls the images endpoint through a drawing record and saves the image', async () => {
      await useRecords([{ key: 'sk-mock-a' }, { key: 'sk-mock-draw', purpose: 'drawing' }]);
      const conversationId = await newConversation('dall-e-3');
      const reply = await sendMessage(chat, user.token, conversationId, {
        content: 'a lighthouse at dusk',
      });
      expect(reply.status).toBe(200);
      expect(reply.events.map((e) => e.event)).toEqual(['image', 'done']);
      const urls = reply.events[0]!.data.urls as string[];
      expect(urls).toHaveLength(1);
      // The mock's own media host: the link leads to a real PNG.
      expect(urls[0]).toMatch(new RegExp(`^${mock.url}/media/images/[0-9a-f]{16}\\.png$`));
      const image = await fetch(urls[0]!);
      expect(image.headers.get('content-type')).toBe('image/png');
      expect(await mock.requests()).toMatchObject({ 'sk-mock-draw': 1, 'sk-mock-a': 0 });
      const [prompt, drawing] = await storedMessages(conversationId);
      expect(prompt).toMatchObject({
        role: 'user',
        content: 'a lighthouse at dusk',
        model: 'dall-e-3',
      });
      expect(drawing).toMatchObject({
        role: 'assistant',
        imageUrls: urls,
        status: 'complete',
        model: 'dall-e-3',
      });
    });

    it('fails clearly when there is no drawing record', async () => {
      await useRecords([{ key: 'sk-mock-a' }]);
      const conversationId = await newConversation('dall-e-3');
      const reply = await sendMessage(chat, user.token, conversationId, { content: 'a cat' });
      expect(reply.status).toBe(503);
      const { error } = reply.json as { error: { code: string; message: string } };
      expect(error.code).toBe('no_api_key');
      expect(error.message).toMatch(/purpose "drawing".*menu API-KEY/);
      expect(await mock.requests()).toMatchObject({ 'sk-mock-a': 0 });
    });

    it('skips a drawing record that times out', async () => {
      await useRecords([
        { key: 'sk-mock-a', purpose: 'drawing' },
        { key: 'sk-mock-draw', purpose: 'drawing' },
      ]);
      await mock.fault('sk-mock-a', { hang: true });
      const conversationId = await newConversation('dall-e-3');
      for (let i = 0; i < 2; i += 1) {
        const reply = await sendMessage(chat, user.token, conversationId, {
          content: `picture ${i}`,
        });
        expect(reply.events.map((e) => e.event)).toEqual(['image', 'done']);
      }
      expect((await mock.requests())['sk-mock-draw']).toBe(2);
    });
  });

  describe('paging the history', () => {
    it('opens on the latest page and pages back from what is shown, oldest first', async () => {
      await useRecords([{ key: 'sk-mock-a' }]);
      const conversationId = await newConversation();
      for (let i = 1; i <= 6; i += 1) {
        await sendMessage(chat, user.token, conversationId, { content: `question ${i}` });
      }
      const page = async (query: string) =>
        (
          await chat.api
            .get(`/api/conversations/${conversationId}/messages?pageSize=5&${query}`)
            .set(bearer(user.token))
            .expect(200)
        ).body as { items: StoredMessage[]; total: number };
      const contents = (items: StoredMessage[]) => items.map((m) => m.content);

      const latest = await page('start=latest');
      expect(latest.total).toBe(12);
      expect(contents(latest.items)).toEqual([
        'Echo: question 4',
        'question 5',
        'Echo: question 5',
        'question 6',
        'Echo: question 6',
      ]);
      // A new message arrives; the page behind the shown ones does not move.
      await sendMessage(chat, user.token, conversationId, { content: 'question 7' });
      const older = await page(`start=latest&before=${latest.items[0]!.id}`);
      expect(older.total).toBe(7);
      expect(contents(older.items)).toEqual([
        'question 2',
        'Echo: question 2',
        'question 3',
        'Echo: question 3',
        'question 4',
      ]);
      const oldest = await page(`start=latest&before=${latest.items[0]!.id}&page=2`);
      expect(contents(oldest.items)).toEqual(['question 1', 'Echo: question 1']);
      // Counted from the oldest end, as before.
      expect(contents((await page('')).items)[0]).toBe('question 1');

      const other = await newUser(chat.api, 'pager');
      const elsewhere = await newConversation('gpt-4o', other.token);
      const foreign = await chat.api
        .get(`/api/conversations/${elsewhere}/messages?before=${latest.items[0]!.id}`)
        .set(bearer(other.token))
        .expect(404);
      expect(foreign.body.error.code).toBe('not_found');
      const refused = await chat.api
        .get(`/api/conversations/${conversationId}/messages?start=middle`)
        .set(bearer(user.token))
        .expect(400);
      expect(refused.body.error.fields[0].field).toBe('start');
    });
  });

  describe('music', () => {
    it('streams a music model through a music record; its reply carries the song link', async () => {
      await useRecords([{ key: 'sk-mock-a' }, { key: 'sk-mock-draw', purpose: 'music' }]);
      const conversationId = await newConversation('suno-v3');
      const reply = await sendMessage(chat, user.token, conversationId, {
        content: 'a song about rain',
      });
      expect(reply.events.at(-1)?.event).toBe('done');
      expect(await mock.requests()).toMatchObject({ 'sk-mock-draw': 1, 'sk-mock-a': 0 });
      const [, song] = await storedMessages(conversationId);
      const link = new RegExp(`\\((${mock.url}/media/audio/[0-9a-f]{16}\\.wav)\\)`).exec(
        song!.content,
      );
      expect(link).not.toBeNull();
      const audio = await fetch(link![1]!);
      expect(audio.headers.get('content-type')).toBe('audio/wav');
    });
  });

  describe('when the browser goes away', () => {
    it('stops the upstream call and keeps what had arrived', async () => {
      await useRecords([{ key: 'sk-mock-a' }]);
      await mock.fault('sk-mock-a', { chunkDelayMs: 300 }, 1);
      const conversationId = await newConversation();
      const abort = new AbortController();
      const response = await fetch(`${chat.url}/api/conversations/${conversationId}/messages`, {
        method: 'POST',
        headers: { ...bearer(user.token), 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'a long answer with many words in it' }),
        signal: abort.signal,
      });
      const reader = response.body!.getReader();
      let received = '';
      while (!received.includes('event: delta')) {
        const { value } = await reader.read();
        received += new TextDecoder().decode(value);
      }
      abort.abort();
      const answer = await waitFor(async () => (await storedMessages(conversationId))[1], {
        what: 'saved reply',
      });
      expect(answer).toMatchObject({ status: 'partial', errorCode: 'request_cancelled' });
      expect(answer.content.length).toBeGreaterThan(0);
      expect(answer.content).not.toBe('Echo: a long answer with many words in it');
    });
  });
});
