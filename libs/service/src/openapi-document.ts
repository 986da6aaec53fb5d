import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, type BaseEnv } from '@switchyard/config';
import { type ServiceDefinition } from './start-service.js';

/**
 * Writes a service's OpenAPI document to the file named on the command line, at build time,
 * so the web clients generated from it are typed against the DTOs without a running
 * service. The app is created but never initialised: no database or Redis connection is
 * opened, so the addresses given here are placeholders that are never dialled.
 */
export async function writeOpenApiDocument<E extends BaseEnv>(
  definition: ServiceDefinition<E>,
  describe: (app: NestFastifyApplication) => object,
  environment: Record<string, string> = {},
): Promise<void> {
  const [output] = process.argv.slice(2);
  if (!output) throw new Error('usage: node dist/openapi-cli.js <output.json>');
  const env = loadEnvironment(definition.environment, {
    DATABASE_URL: 'postgresql://openapi@127.0.0.1:1/openapi',
    REDIS_URL: 'redis://127.0.0.1:1',
    ...environment,
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    definition.module(env),
    new FastifyAdapter(),
    { logger: false, abortOnError: false },
  );
  await writeFile(output, `${JSON.stringify(describe(app), null, 2)}\n`);
  await app.close();
}
