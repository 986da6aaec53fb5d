import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Logger } from '@switchyard/observability';
import { registerStaticSite } from '@switchyard/service';
import { type FastifyInstance } from 'fastify';

// The administrators' dashboard (apps/dashboard) at `/`, beside the API it talks to at
// `/api` on the same origin. `/v1`, `/v1beta` (Gemini's API) and `/api` are never the app's: an unknown path there
// stays a JSON error (docs/architecture.md, "Web UIs").

export const API_PREFIXES = ['/v1', '/v1beta', '/api'];

/** `DASHBOARD_DIR`, or the dashboard package's build. */
export function dashboardDirectory(configured: string | undefined): string {
  if (configured !== undefined && configured !== '') return path.resolve(configured);
  const manifest = fileURLToPath(import.meta.resolve('@switchyard/dashboard/package.json'));
  return path.join(path.dirname(manifest), 'dist');
}

/**
 * Serves the dashboard when it is built. A gateway without it still routes requests: the
 * UI is not worth refusing to start over, so its absence is a warning, not an error.
 */
export async function serveDashboard(
  fastify: FastifyInstance,
  directory: string,
  logger: Logger,
): Promise<boolean> {
  if (!existsSync(path.join(directory, 'index.html'))) {
    logger.warn({ directory }, 'dashboard not built: / answers 404 (build @switchyard/dashboard)');
    return false;
  }
  await registerStaticSite(fastify, directory, { reservedPrefixes: API_PREFIXES });
  return true;
}
