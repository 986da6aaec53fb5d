import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { query } from '@switchyard/testing';
import { verifyLicense } from './editions/license.js';
import {
  ADMIN,
  SECRET_KEYS,
  bearer,
  login,
  resetChatData,
  startChat,
  type ChatHarness,
} from './testing/chat-harness.fixture.js';

// The built command line, run as the launcher and the vendor run it.

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/cli.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, SECRET_KEYS, ...env } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (stdin !== undefined) child.stdin?.end(stdin);
    else child.stdin?.end();
  });
}

describe('the chat command line', () => {
  let chat: ChatHarness;
  let admin: Record<string, string>;
  let folder: string;

  beforeAll(async () => {
    await resetChatData();
    chat = await startChat();
    admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
    folder = await mkdtemp(path.join(tmpdir(), 'chat-cli-'));
  });

  afterAll(async () => {
    await chat.close();
    await rm(folder, { recursive: true, force: true });
  });

  describe('create-api-key', () => {
    it('adds a record once, then keeps it up to date with the same address and purpose', async () => {
      const first = await cli([
        'create-api-key',
        '--address',
        'http://127.0.0.1:3000/v1/chat/completions',
        '--key',
        'sk-gateway-token-AAAA',
        '--purpose',
        'chat',
      ]);
      expect(first).toMatchObject({ code: 0, stderr: '' });
      const created = JSON.parse(first.stdout) as {
        created: boolean;
        record: Record<string, unknown>;
      };
      expect(created.created).toBe(true);
      expect(created.record).toMatchObject({
        address: 'http://127.0.0.1:3000',
        addressNormalized: true,
        keyLastFour: 'AAAA',
        purpose: 'chat',
        enabled: true,
      });
      expect(first.stdout).not.toContain('sk-gateway-token');

      await chat.api
        .patch(`/api/admin/api-keys/${created.record.id as number}`)
        .set(admin)
        .send({ enabled: false })
        .expect(200);
      const again = await cli(
        ['create-api-key', '--address', 'http://127.0.0.1:3000', '--key', '-', '--purpose', 'chat'],
        {},
        'sk-gateway-token-BBBB\n',
      );
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({
        created: false,
        record: { id: created.record.id, keyLastFour: 'BBBB', enabled: true },
      });

      const drawing = await cli([
        'create-api-key',
        '--address',
        'http://127.0.0.1:3000',
        '--key',
        'sk-gateway-token-CCCC',
        '--purpose',
        'drawing',
      ]);
      expect(JSON.parse(drawing.stdout)).toMatchObject({
        created: true,
        record: { purpose: 'drawing' },
      });

      const records = await chat.api.get('/api/admin/api-keys').set(admin).expect(200);
      expect(records.body.total).toBe(2);
      expect(records.body.items).toHaveLength(2);
    });

    it('refuses bad arguments with the usage', async () => {
      const purpose = await cli([
        'create-api-key',
        '--address',
        'http://x.example',
        '--key',
        'k',
        '--purpose',
        'video',
      ]);
      expect(purpose.code).toBe(2);
      expect(purpose.stderr).toMatch(/purpose must be one of chat, drawing, music/);
      expect(purpose.stderr).toContain('usage:');
      const missing = await cli(['create-api-key', '--address', 'http://x.example']);
      expect(missing.code).toBe(2);
      const unknown = await cli(['create-api-key', '--adress', 'http://x.example']);
      expect(unknown.code).toBe(2);
      const command = await cli(['make-coffee']);
      expect(command).toMatchObject({ code: 2 });
      expect(command.stderr).toContain('unknown command "make-coffee"');
    });

    it('refuses a bad address, and one the plus edition does not allow', async () => {
      const address = await cli([
        'create-api-key',
        '--address',
        'ftp://relay.example',
        '--key',
        'k',
        '--purpose',
        'chat',
      ]);
      expect(address.code).toBe(1);
      expect(address.stderr).toMatch(/http:\/\/ or https:\/\//);
      const plus = await cli(
        [
          'create-api-key',
          '--address',
          'https://own-relay.example',
          '--key',
          'k',
          '--purpose',
          'chat',
        ],
        { EDITION: 'plus', RECOMMENDED_RELAYS: 'https://relay.recommended.example' },
      );
      expect(plus.code).toBe(1);
      expect(plus.stderr).toMatch(/is not on the whitelist/);
      const rows = await query(
        process.env.DATABASE_URL!,
        `SELECT 1 FROM "ApiKeyRecord" WHERE address LIKE '%own-relay%'`,
      );
      expect(rows).toEqual([]);
    });

    it('says which variable is wrong when the environment is', async () => {
      const run = await cli(['create-api-key', '--address', 'http://x.example', '--key', 'k'], {
        SECRET_KEYS: 'not-a-key',
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('SECRET_KEYS');
    });
  });

  describe('open-model', () => {
    it('adds a model open to everyone, and opens an existing closed one', async () => {
      const added = await cli(['open-model', '--name', 'cli-model', '--purpose', 'drawing']);
      expect(added).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(added.stdout)).toMatchObject({
        name: 'cli-model',
        purpose: 'drawing',
        open: true,
        vision: false,
      });
      const seeing = await cli(['open-model', '--name', 'cli-vision', '--vision']);
      expect(JSON.parse(seeing.stdout)).toMatchObject({ name: 'cli-vision', vision: true });

      const closed = await chat.api
        .post('/api/admin/models')
        .set(admin)
        .send({ platform: 'openai', name: 'cli-closed', purpose: 'chat', open: false })
        .expect(201);
      const opened = await cli(['open-model', '--name', 'cli-closed']);
      expect(JSON.parse(opened.stdout)).toMatchObject({ id: closed.body.id, open: true });
      const models = await query<{ name: string; open: boolean }>(
        process.env.DATABASE_URL!,
        `SELECT name, open FROM "ChatModel" WHERE name IN ('cli-model', 'cli-closed') ORDER BY name`,
      );
      expect(models).toEqual([
        { name: 'cli-closed', open: true },
        { name: 'cli-model', open: true },
      ]);
    });

    it('refuses a missing name with the usage', async () => {
      const refused = await cli(['open-model']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('open-model --name NAME');
    });
  });

  describe('set-a2a-model', () => {
    it('names the chat model that answers A2A tasks, in the chat settings', async () => {
      await cli(['open-model', '--name', 'cli-decider']);
      const set = await cli(['set-a2a-model', '--name', 'cli-decider']);
      expect(set).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(set.stdout)).toMatchObject({ a2aModel: 'cli-decider' });
      const settings = await chat.api.get('/api/admin/chat-settings').set(admin).expect(200);
      expect(settings.body.a2aModel).toBe('cli-decider');
    });

    it('refuses a model the app does not have, or none', async () => {
      const unknown = await cli(['set-a2a-model', '--name', 'cli-nobody']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('no model is named "cli-nobody"');
      const missing = await cli(['set-a2a-model']);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('set-a2a-model --name NAME');
    });
  });

  describe('issue-license', () => {
    const vendor = generateKeyPairSync('ed25519');
    let keyFile: string;

    beforeAll(async () => {
      keyFile = path.join(folder, 'vendor.pem');
      await writeFile(keyFile, vendor.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    });

    it('prints a license that this installation accepts', async () => {
      const installationId = (await chat.api.get('/api/admin/edition').set(admin).expect(200)).body
        .installationId as string;
      const run = await cli([
        'issue-license',
        '--private-key',
        keyFile,
        '--licensee',
        'Example Ltd',
        '--installation',
        installationId,
        '--days',
        '30',
      ]);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      const license = run.stdout.trim();
      const check = verifyLicense(license, vendor.publicKey, installationId);
      expect(check).toMatchObject({
        ok: true,
        payload: { licensee: 'Example Ltd', edition: 'plus' },
      });
      const payload = check.ok ? check.payload : null;
      const days = (Date.parse(payload!.expiresAt) - Date.parse(payload!.issuedAt)) / 86_400_000;
      expect(days).toBe(30);

      const plus = await startChat({
        EDITION: 'plus',
        LICENSE_PUBLIC_KEY: vendor.publicKey
          .export({ type: 'spki', format: 'der' })
          .toString('base64'),
      });
      try {
        const token = bearer(await login(plus.api, ADMIN.username, ADMIN.password));
        const activated = await plus.api
          .post('/api/admin/edition/activate')
          .set(token)
          .send({ license })
          .expect(200);
        expect(activated.body.license).toMatchObject({ licensee: 'Example Ltd', active: true });
      } finally {
        await plus.close();
      }
    });

    it('refuses missing arguments and a key that is not an Ed25519 private key', async () => {
      const missing = await cli(['issue-license', '--private-key', keyFile, '--licensee', 'x']);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('--installation');
      const days = await cli([
        'issue-license',
        '--private-key',
        keyFile,
        '--licensee',
        'x',
        '--installation',
        'abc',
        '--days',
        '0',
      ]);
      expect(days.code).toBe(2);
      const publicFile = path.join(folder, 'public.pem');
      await writeFile(publicFile, vendor.publicKey.export({ type: 'spki', format: 'pem' }));
      const wrongKey = await cli([
        'issue-license',
        '--private-key',
        publicFile,
        '--licensee',
        'x',
        '--installation',
        'abc',
        '--days',
        '1',
      ]);
      expect(wrongKey.code).toBe(1);
      expect(wrongKey.stderr).toMatch(/Ed25519 key in PEM/);
    });
  });
});
