import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, WebEnv } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { createService } from '@switchyard/service';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { webDefinition } from './web.definition.js';

// Test helpers: a built-looking site in a temporary folder, and the real web app on a port.

export const INDEX_HTML =
  '<!doctype html><html lang="en"><head><title>Switchyard chat</title>' +
  '<script type="module" src="/assets/index-Ab12Cd34.js"></script></head>' +
  '<body><div id="app"></div></body></html>';
export const ASSET_JS = 'console.log("switchyard");';

export interface TestSite {
  root: string;
  remove(): void;
}

export function makeSite(): TestSite {
  const root = mkdtempSync(path.join(tmpdir(), 'web-site-'));
  mkdirSync(path.join(root, 'assets'));
  writeFileSync(path.join(root, 'index.html'), INDEX_HTML);
  writeFileSync(path.join(root, 'assets', 'index-Ab12Cd34.js'), ASSET_JS);
  writeFileSync(path.join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

export interface TestWeb {
  app: NestFastifyApplication;
  url: string;
  close(): Promise<void>;
}

export async function startWeb(variables: Record<string, string>): Promise<TestWeb> {
  const env = loadEnvironment(WebEnv, variables);
  const app = await createService(
    webDefinition,
    env,
    createLogger({ service: 'web', level: 'silent' }),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address();
  if (address === null || typeof address === 'string') throw new Error('web has no port');
  return { app, url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}
