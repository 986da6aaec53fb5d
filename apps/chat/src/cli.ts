#!/usr/bin/env node
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { ChatEnv, loadEnvironment } from '@switchyard/config';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { CreateApiKeyDto } from './api-keys/api-keys.dto.js';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { CliModule } from './cli.module.js';
import { CreateModelDto } from './models/models.dto.js';
import { ModelsService } from './models/models.service.js';
import { PURPOSES } from './common/platform.js';
import { ChatSettingsService } from './settings/chat-settings.service.js';
import { parsePrivateKey, signLicense } from './editions/license.js';

// Operator commands of the chat service:
//   create-api-key   wires chat to an upstream (the local launcher, on a new database)
//   open-model       makes a model usable by everyone (the launcher's demo models)
//   set-a2a-model    names the model that answers A2A tasks (the launcher's demo model)
//   issue-license    the vendor's tool that signs plus-edition licenses (tests, development)

const USAGE = `usage:
  cli.js create-api-key --address URL --key KEY|- --purpose ${PURPOSES.join('|')}
      Adds the API key record, or updates the one with the same address and purpose
      (new key, enabled). "--key -" reads the key from standard input.
  cli.js open-model --name NAME --purpose ${PURPOSES.join('|')} [--vision]
      Adds the model, or changes the one with that name, open to every user; --vision
      marks it as one that reads images.
  cli.js set-a2a-model --name NAME
      Makes the chat model NAME the one that answers A2A tasks (Admin → Settings).
  cli.js issue-license --private-key FILE --licensee NAME --installation ID --days N
      Prints a plus-edition license signed with the Ed25519 private key in FILE (PEM).`;

class UsageError extends Error {}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

async function createApiKey(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      address: { type: 'string' },
      key: { type: 'string' },
      purpose: { type: 'string', default: 'chat' },
    },
  });
  if (!values.address || !values.key) throw new UsageError('--address and --key are required');
  const dto = plainToInstance(CreateApiKeyDto, {
    address: values.address,
    key: values.key === '-' ? await readStdin() : values.key,
    purpose: values.purpose,
  });
  const problems = validateSync(dto).flatMap((error) => Object.values(error.constraints ?? {}));
  if (problems.length > 0) throw new UsageError(problems.join('; '));

  const result = await withChat((context) =>
    context
      .get(ApiKeysService)
      .ensure({ address: dto.address, key: dto.key, purpose: dto.purpose ?? 'chat' }),
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function withChat<T>(
  work: (context: Awaited<ReturnType<typeof NestFactory.createApplicationContext>>) => Promise<T>,
): Promise<T> {
  const env = loadEnvironment(ChatEnv);
  const context = await NestFactory.createApplicationContext(CliModule.forRoot(env), {
    logger: ['error'],
    abortOnError: false,
  });
  try {
    return await work(context);
  } finally {
    await context.close();
  }
}

async function openModel(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      purpose: { type: 'string', default: 'chat' },
      vision: { type: 'boolean', default: false },
    },
  });
  const dto = plainToInstance(CreateModelDto, {
    name: values.name,
    purpose: values.purpose,
    vision: values.vision,
    open: true,
  });
  const problems = validateSync(dto).flatMap((error) => Object.values(error.constraints ?? {}));
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  const model = await withChat((context) =>
    context.get(ModelsService).ensureOpen(dto.name, dto.purpose, dto.vision ?? false),
  );
  process.stdout.write(`${JSON.stringify(model)}\n`);
}

async function setA2aModel(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { name: { type: 'string' } } });
  if (!values.name?.trim()) throw new UsageError('--name is required');
  const settings = await withChat((context) =>
    context.get(ChatSettingsService).update({ a2aModel: values.name!.trim() }),
  );
  process.stdout.write(`${JSON.stringify(settings)}\n`);
}

async function issueLicense(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      'private-key': { type: 'string' },
      licensee: { type: 'string' },
      installation: { type: 'string' },
      days: { type: 'string' },
    },
  });
  const licensee = values.licensee?.trim() ?? '';
  const installationId = values.installation?.trim() ?? '';
  const days = Number(values.days);
  if (!values['private-key']) throw new UsageError('--private-key is required');
  if (licensee === '' || licensee.length > 200)
    throw new UsageError('--licensee: 1 to 200 characters');
  if (installationId === '' || installationId.length > 64) {
    throw new UsageError('--installation: the installation id shown at /api/admin/edition');
  }
  if (!Number.isInteger(days) || days < 1 || days > 3650) {
    throw new UsageError('--days: a whole number from 1 to 3650');
  }
  const privateKey = parsePrivateKey(await readFile(values['private-key'], 'utf8'));
  const issuedAt = new Date();
  const license = signLicense(
    {
      licenseId: randomUUID(),
      licensee,
      edition: 'plus',
      installationId,
      issuedAt: issuedAt.toISOString(),
      expiresAt: new Date(issuedAt.getTime() + days * 86_400_000).toISOString(),
    },
    privateKey,
  );
  process.stdout.write(`${license}\n`);
}

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  'create-api-key': createApiKey,
  'open-model': openModel,
  'set-a2a-model': setA2aModel,
  'issue-license': issueLicense,
};

const [command = '', ...rest] = process.argv.slice(2);
const run = COMMANDS[command];
if (!run) {
  console.error(command ? `unknown command "${command}"\n${USAGE}` : USAGE);
  process.exit(2);
}
try {
  await run(rest);
} catch (error) {
  const parseProblem = String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
  if (error instanceof UsageError || parseProblem) {
    console.error(`${command}: ${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  // A refused record (ApiError), a bad environment (ConfigurationError), a missing file...
  console.error(`${command}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
