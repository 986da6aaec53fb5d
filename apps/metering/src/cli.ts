#!/usr/bin/env node
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { ConfigurationError, loadEnvironment, MeteringEnv } from '@switchyard/config';
import { QueueConnection, UsageQueue, busConnectionOf } from '@switchyard/messaging';
import { DeadLetters, type DeadLetter } from './dead-letters/dead-letters.js';

// Operator commands of the metering worker, against the queue of MeteringEnv
// (REDIS_URL, REDIS_PREFIX):
//   dead-letters list [--offset N] [--limit N] [--json]
//   dead-letters replay --id JOB_ID | --all      (a record's job id is its request id)

const USAGE = `usage:
  metering dead-letters list [--offset N] [--limit N] [--json]
  metering dead-letters replay --id JOB_ID
  metering dead-letters replay --all`;

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

function count(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) fail(`--${name} must be a whole number\n${USAGE}`);
  return Number(value);
}

function line(letter: DeadLetter): string {
  const what =
    letter.records === 1
      ? [letter.model ?? '?', letter.tokenId === null ? '' : `token ${letter.tokenId}`]
          .filter(Boolean)
          .join(', ')
      : `${letter.records} records`;
  return `${letter.id}\t${letter.failedAt ?? '-'}\t${letter.attempts} attempt(s)\t${what}\t${letter.reason}`;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    id: { type: 'string' },
    all: { type: 'boolean', default: false },
    offset: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});

const [group, command] = positionals;
if (group !== 'dead-letters' || (command !== 'list' && command !== 'replay')) fail(USAGE);

let env: MeteringEnv;
try {
  env = loadEnvironment(MeteringEnv);
} catch (error) {
  fail(error instanceof ConfigurationError ? error.message : String(error));
}

const connection = new QueueConnection(busConnectionOf(env));
const queue = UsageQueue.open(connection, { maxRetriesPerRequest: 1 });
queue.on('error', () => undefined);
const deadLetters = new DeadLetters(queue);

try {
  if (command === 'list') {
    const page = await deadLetters.list(
      count(values.offset, 0, 'offset'),
      count(values.limit, 50, 'limit'),
    );
    if (values.json) {
      console.log(JSON.stringify(page, null, 2));
    } else {
      console.log(`${page.total} dead letter(s)`);
      for (const letter of page.items) console.log(line(letter));
    }
  } else if (values.all && values.id === undefined) {
    console.log(`replayed ${await deadLetters.replayAll()} dead letter(s)`);
  } else if (values.id !== undefined && !values.all) {
    if (!(await deadLetters.replay(values.id))) {
      await queue.close();
      fail(`no dead letter with id ${values.id}`);
    }
    console.log(`replayed ${values.id}`);
  } else {
    await queue.close();
    fail(`replay needs exactly one of --id or --all\n${USAGE}`);
  }
} catch (error) {
  console.error(
    `dead-letters ${command} failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  await queue.close().catch(() => undefined);
  process.exit(2);
}
await queue.close();
