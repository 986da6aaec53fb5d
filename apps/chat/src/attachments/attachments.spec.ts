import { query } from '@switchyard/testing';
import {
  ADMIN,
  bearer,
  login,
  newUser,
  resetChatData,
  sendMessage,
  startChat,
  startMockUpstream,
  type ChatHarness,
  type MockUpstream,
} from '../testing/chat-harness.fixture.js';

// Images attached to messages: uploads checked by their bytes and limits, read by their
// owner only, sent to a model that reads images as data URLs, kept through regenerate and
// deleted with their conversation. The chat app in process, a real mock-upstream behind it.

const MiB = 1024 * 1024;
const KEY = 'sk-mock-vision';

/** Bytes that are a PNG by their signature, `size` long, distinct per `seed`. */
function png(size = 64, seed = 1): Buffer {
  const bytes = Buffer.alloc(size, seed);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes);
  return bytes;
}
const gif = () => Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(32, 7)]);

interface Uploaded {
  id: string;
  mediaType: string;
  byteSize: number;
  url: string;
}

interface ContentPart {
  type: string;
  text?: string;
  image_url?: { url: string };
}

describe('image attachments', () => {
  let chat: ChatHarness;
  let mock: MockUpstream;
  let owner: { id: number; token: string };
  let stranger: { id: number; token: string };

  const upload = (token: string, type: string, body: Buffer) =>
    chat.api.post('/api/attachments').set(bearer(token)).set('content-type', type).send(body);

  const uploaded = async (body = png(), token = owner.token): Promise<Uploaded> =>
    (await upload(token, 'image/png', body).expect(201)).body as Uploaded;

  const newConversation = async (model = 'vision-model', token = owner.token) =>
    (await chat.api.post('/api/conversations').set(bearer(token)).send({ model }).expect(201)).body
      .id as string;

  const history = async (conversationId: string) =>
    (
      await chat.api
        .get(`/api/conversations/${conversationId}/messages`)
        .set(bearer(owner.token))
        .expect(200)
    ).body.items as { id: number; role: string; attachments: Uploaded[] }[];

  /** The messages of the last chat completion the upstream received. */
  const lastUpstreamMessages = async () => {
    const bodies = (await mock.received(KEY)) as {
      messages?: { role: string; content: unknown }[];
    }[];
    return bodies.at(-1)?.messages ?? [];
  };

  const imageUrlsOf = (content: unknown): string[] =>
    Array.isArray(content)
      ? (content as ContentPart[]).flatMap((part) =>
          part.type === 'image_url' && part.image_url ? [part.image_url.url] : [],
        )
      : [];

  const dataUrl = (bytes: Buffer, type = 'image/png') =>
    `data:${type};base64,${bytes.toString('base64')}`;

  beforeAll(async () => {
    await resetChatData();
    mock = await startMockUpstream([KEY]);
    chat = await startChat();
    const admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
    for (const model of [
      { name: 'vision-model', open: true, vision: true },
      { name: 'text-model', open: true },
      { name: 'painter', purpose: 'drawing', open: true, vision: true },
    ]) {
      await chat.api.post('/api/admin/models').set(admin).send(model).expect(201);
    }
    for (const purpose of ['chat', 'drawing']) {
      await chat.api
        .post('/api/admin/api-keys')
        .set(admin)
        .send({ address: mock.url, key: KEY, purpose })
        .expect(201);
    }
    owner = await newUser(chat.api, 'owner');
    stranger = await newUser(chat.api, 'stranger');
  });

  afterAll(async () => {
    await chat?.close();
    await mock?.stop();
  });

  beforeEach(async () => {
    await mock.reset();
  });

  it('publishes its limits', async () => {
    const limits = await chat.api
      .get('/api/attachments/limits')
      .set(bearer(owner.token))
      .expect(200);
    expect(limits.body).toEqual({
      mediaTypes: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'],
      bytesPerImage: 5 * MiB,
      imagesPerMessage: 4,
      bytesPerMessage: 7 * MiB,
    });
  });

  it('keeps an upload and serves it to its owner only, as an image nothing may sniff', async () => {
    const bytes = png(300, 3);
    const image = await uploaded(bytes);
    expect(image).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      mediaType: 'image/png',
      byteSize: 300,
      url: `/api/attachments/${image.id}`,
    });

    const read = await chat.api
      .get(image.url)
      .set(bearer(owner.token))
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect(Buffer.compare(read.body as Buffer, bytes)).toBe(0);
    expect(read.headers['content-type']).toBe('image/png');
    expect(read.headers['cache-control']).toMatch(/^private\b/);
    expect(read.headers['x-content-type-options']).toBe('nosniff');

    const foreign = await chat.api.get(image.url).set(bearer(stranger.token)).expect(404);
    expect(foreign.body.error.code).toBe('not_found');
    await chat.api.get(image.url).expect(401);
    await chat.api
      .get('/api/attachments/00000000-0000-4000-8000-000000000000')
      .set(bearer(owner.token))
      .expect(404);
  });

  it('takes PNG, JPEG, WebP and GIF by their bytes, and refuses anything else clearly', async () => {
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(20)]);
    const webp = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 ')]);
    for (const [type, body] of [
      ['image/jpeg', jpeg],
      ['image/webp', webp],
      ['image/gif', gif()],
      ['image/png; charset=binary', png()],
    ] as const) {
      const response = await upload(owner.token, type, body).expect(201);
      expect(response.body.mediaType).toBe(type.split(';')[0]);
    }

    const refusals: [string, Buffer, number, string][] = [
      // A PNG renamed to .jpg: the bytes decide, and they disagree with the claim.
      ['image/jpeg', png(), 415, 'image_type_not_supported'],
      // Text, or a script, that claims to be an image.
      ['image/png', Buffer.from('<script>alert(1)</script>'), 415, 'image_type_not_supported'],
      [
        'image/svg+xml',
        Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'),
        415,
        'image_type_not_supported',
      ],
      ['image/bmp', Buffer.from('BM0000'), 415, 'image_type_not_supported'],
      ['image/png', Buffer.alloc(0), 400, 'validation_failed'],
    ];
    for (const [type, body, status, code] of refusals) {
      const response = await upload(owner.token, type, body);
      expect({ type, status: response.status, code: response.body.error?.code }).toEqual({
        type,
        status,
        code,
      });
      expect(response.body.error.message).toEqual(expect.any(String));
    }
    const notAnImage = await chat.api
      .post('/api/attachments')
      .set(bearer(owner.token))
      .send({ image: 'base64…' })
      .expect(415);
    expect(notAnImage.body.error).toMatchObject({
      code: 'image_type_not_supported',
      message: expect.stringContaining('PNG, JPEG, WebP or GIF'),
    });
  });

  it('refuses an image over 5 MiB, by its length and when sent in chunks', async () => {
    const refused = await upload(owner.token, 'image/png', png(5 * MiB + 1)).expect(413);
    expect(refused.body.error).toEqual({
      code: 'image_too_large',
      message: 'An image may have at most 5 MiB',
    });
    // Without a Content-Length the bytes are counted.
    const chunked = await fetch(`${chat.url}/api/attachments`, {
      method: 'POST',
      headers: { ...bearer(owner.token), 'content-type': 'image/png' },
      body: new ReadableStream({
        start(controller) {
          const piece = png(MiB);
          for (let i = 0; i < 6; i += 1) controller.enqueue(new Uint8Array(piece));
          controller.close();
        },
      }),
      duplex: 'half',
    });
    expect(chunked.status).toBe(413);
    expect(((await chunked.json()) as { error: { code: string } }).error.code).toBe(
      'image_too_large',
    );
    await uploaded(png(5 * MiB));
  });

  it('sends the images to a model that reads them as image_url data URLs, and stores them with the question', async () => {
    const first = png(100, 11);
    const second = gif();
    const images = [
      await uploaded(first),
      (await upload(owner.token, 'image/gif', second).expect(201)).body as Uploaded,
    ];
    const conversationId = await newConversation();
    const reply = await sendMessage(chat, owner.token, conversationId, {
      content: 'what is in these?',
      attachmentIds: images.map((image) => image.id),
    });
    expect(reply.status).toBe(200);
    expect(reply.events.at(-1)?.event).toBe('done');

    const question = (await lastUpstreamMessages()).at(-1)!;
    expect(question.role).toBe('user');
    expect(question.content).toEqual([
      { type: 'text', text: 'what is in these?' },
      { type: 'image_url', image_url: { url: dataUrl(first) } },
      { type: 'image_url', image_url: { url: dataUrl(second, 'image/gif') } },
    ]);

    const stored = await history(conversationId);
    expect(stored[0]!.attachments).toEqual(images);
    expect(stored[1]!.attachments).toEqual([]);

    // The next question carries the earlier images again: the model reads the whole talk.
    await sendMessage(chat, owner.token, conversationId, { content: 'and now?' });
    const messages = await lastUpstreamMessages();
    expect(imageUrlsOf(messages[0]!.content)).toEqual([
      dataUrl(first),
      dataUrl(second, 'image/gif'),
    ]);
    expect(messages.at(-1)!.content).toBe('and now?');

    // An image goes with one message only.
    const again = await sendMessage(chat, owner.token, conversationId, {
      content: 'once more',
      attachmentIds: [images[0]!.id],
    });
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({
      error: { code: 'validation_failed', fields: [{ field: 'attachmentIds[0]' }] },
    });
  });

  it('refuses images to a model that does not read them, and keeps them for another model', async () => {
    const image = await uploaded();
    for (const model of ['text-model', 'painter']) {
      const conversationId = await newConversation(model);
      const refused = await sendMessage(chat, owner.token, conversationId, {
        content: 'look',
        attachmentIds: [image.id],
      });
      expect(refused.status).toBe(400);
      expect(refused.json).toEqual({
        error: {
          code: 'model_cannot_see_images',
          message: `The model "${model}" does not read images: choose a model that does, or send the message without them`,
        },
      });
      expect(await history(conversationId)).toEqual([]);
    }
    expect((await mock.requests())[KEY]).toBe(0);

    // Earlier images are left out for a model that reads none; the text stays.
    const conversationId = await newConversation();
    await sendMessage(chat, owner.token, conversationId, {
      content: 'look',
      attachmentIds: [image.id],
    });
    await sendMessage(chat, owner.token, conversationId, {
      content: 'in words',
      model: 'text-model',
    });
    const messages = await lastUpstreamMessages();
    expect(messages.map((m) => m.content)).toEqual(['look', 'Echo: look', 'in words']);
  });

  it('refuses too many images, too many bytes together, and images that are not the sender’s', async () => {
    const conversationId = await newConversation();
    const five = await Promise.all([1, 2, 3, 4, 5].map((seed) => uploaded(png(64, seed))));
    const tooMany = await sendMessage(chat, owner.token, conversationId, {
      content: 'five',
      attachmentIds: five.map((image) => image.id),
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json).toMatchObject({ error: { code: 'too_many_images' } });

    const big = [await uploaded(png(4 * MiB, 1)), await uploaded(png(4 * MiB, 2))];
    const tooLarge = await sendMessage(chat, owner.token, conversationId, {
      content: 'big',
      attachmentIds: big.map((image) => image.id),
    });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.json).toEqual({
      error: {
        code: 'image_too_large',
        message: "A message's images may have at most 7 MiB together",
      },
    });

    const theirs = await uploaded(png(), stranger.token);
    const foreign = await sendMessage(chat, owner.token, conversationId, {
      content: 'theirs',
      attachmentIds: [five[0]!.id, theirs.id],
    });
    expect(foreign.status).toBe(400);
    expect(foreign.json).toMatchObject({
      error: { code: 'validation_failed', fields: [{ field: 'attachmentIds[1]' }] },
    });
    expect(await history(conversationId)).toEqual([]);
    expect((await mock.requests())[KEY]).toBe(0);
  });

  it('keeps a question’s images through regenerate, so it is sent again with them', async () => {
    const bytes = png(80, 21);
    const image = await uploaded(bytes);
    const conversationId = await newConversation();
    await sendMessage(chat, owner.token, conversationId, {
      content: 'describe',
      attachmentIds: [image.id],
    });
    const [question] = await history(conversationId);
    await chat.api
      .delete(`/api/conversations/${conversationId}/messages?from=${question!.id}`)
      .set(bearer(owner.token))
      .expect(204);
    // Unsent again, still its owner's.
    await chat.api.get(image.url).set(bearer(owner.token)).expect(200);

    const resent = await sendMessage(chat, owner.token, conversationId, {
      content: 'describe it better',
      attachmentIds: [image.id],
    });
    expect(resent.events.at(-1)?.event).toBe('done');
    expect(imageUrlsOf((await lastUpstreamMessages()).at(-1)!.content)).toEqual([dataUrl(bytes)]);
    expect((await history(conversationId))[0]!.attachments).toEqual([image]);
  });

  it('deletes a conversation’s images with it, rows and bytes', async () => {
    const image = await uploaded(png(90, 31));
    const conversationId = await newConversation();
    await sendMessage(chat, owner.token, conversationId, {
      content: 'keep this',
      attachmentIds: [image.id],
    });
    await chat.api
      .delete(`/api/conversations/${conversationId}`)
      .set(bearer(owner.token))
      .expect(204);

    await chat.api.get(image.url).set(bearer(owner.token)).expect(404);
    const rows = await query(
      process.env.DATABASE_URL!,
      'SELECT (SELECT count(*) FROM "Attachment" WHERE id = $1)::int AS rows, (SELECT count(*) FROM "AttachmentBlob" WHERE id = $1)::int AS blobs',
      [image.id],
    );
    expect(rows).toEqual([{ rows: 0, blobs: 0 }]);
  });
});
