import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AdminEnv, loadEnvironment } from '@switchyard/config';
import { generateSecretKeySpec } from '@switchyard/security';
import { AdminModule } from './admin.module.js';
import { buildOpenApiDocument } from './openapi.js';

// Writes the admin API's OpenAPI document at build time, so clients (the dashboard's
// generated API client) are typed against the DTOs without a running service. The app is
// created but never initialised: no database or Redis connection is opened.

const [output] = process.argv.slice(2);
if (!output) {
  console.error('usage: node dist/openapi-cli.js <output.json>');
  process.exit(2);
}
const env = loadEnvironment(AdminEnv, {
  DATABASE_URL: 'postgresql://openapi@127.0.0.1:1/openapi',
  REDIS_URL: 'redis://127.0.0.1:1',
  SECRET_KEYS: generateSecretKeySpec('openapi'),
});
const app = await NestFactory.create<NestFastifyApplication>(
  AdminModule.forRoot(env),
  new FastifyAdapter(),
  { logger: false, abortOnError: false },
);
await writeFile(output, `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`);
await app.close();
