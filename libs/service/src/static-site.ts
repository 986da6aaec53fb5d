import fastifyStatic from '@fastify/static';
import { ApiError } from '@switchyard/contracts';
import { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';

// A single-page app (the chat web app, the gateway dashboard): built files as they are,
// `index.html` for every other page path (the app routes in the browser), long caching for
// content-hashed assets only. Paths under a reserved prefix (an API) are never the app's:
// they go to the server's own not-found handler, so they keep the API's error shape.

/** Vite writes content-hashed file names under `assets/`: they never change in place. */
const HASHED_ASSETS = /^assets\//;

export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const REVALIDATE = 'no-cache';

/**
 * The page's own policy: scripts and styles only from here. Images and sounds come from
 * here, from `data:` and `blob:` URLs, and from `mediaSources`: the hosts where a provider
 * keeps what its models generate (the chat web app shows them and fetches them for its
 * download buttons, so they are also allowed connections).
 */
export function contentSecurityPolicy(mediaSources: readonly string[] = []): string {
  const media = ['', ...mediaSources].join(' ');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob:${media}`,
    `media-src 'self' data: blob:${media}`,
    `connect-src 'self'${media}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function cacheControlFor(relativePath: string): string {
  return HASHED_ASSETS.test(relativePath.split(path.sep).join('/')) ? IMMUTABLE : REVALIDATE;
}

/** A request path as a path inside the site, or null when it tries to leave it. */
function sitePath(url: string): string | null {
  let pathname: string;
  try {
    pathname = decodeURIComponent(new URL(url, 'http://site').pathname);
  } catch {
    return null;
  }
  if (pathname.includes('\0')) return null;
  const segments = pathname.split('/').filter((segment) => segment !== '');
  if (segments.some((segment) => segment === '..' || segment === '.')) return null;
  return segments.join('/');
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

export interface StaticSiteOptions {
  /** Path prefixes (`/v1`, `/api`) whose unknown paths stay the server's 404, not the app. */
  reservedPrefixes?: string[];
  /** Where the app may show images and sounds from, besides itself (`contentSecurityPolicy`). */
  mediaSources?: readonly string[];
}

export async function registerStaticSite(
  fastify: FastifyInstance,
  root: string,
  options: StaticSiteOptions = {},
): Promise<void> {
  if (!existsSync(path.join(root, 'index.html'))) {
    throw new Error(
      `the web client is not built: ${path.join(root, 'index.html')} is missing (run its build)`,
    );
  }
  const policy = contentSecurityPolicy(options.mediaSources);
  const reserved = (options.reservedPrefixes ?? []).map((prefix) =>
    prefix.replace(/^\/+|\/+$/g, ''),
  );
  await fastify.register(fastifyStatic, {
    root,
    serve: false,
    cacheControl: false,
    setHeaders: (reply, file) => {
      const relative = path.relative(root, file);
      void reply.header('cache-control', cacheControlFor(relative));
      void reply.header('x-content-type-options', 'nosniff');
      if (relative === 'index.html') {
        void reply.header('content-security-policy', policy);
        void reply.header('referrer-policy', 'same-origin');
      }
    },
  });

  const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const relative = sitePath(request.url);
    if (
      relative !== null &&
      reserved.some((prefix) => relative === prefix || relative.startsWith(`${prefix}/`))
    ) {
      reply.callNotFound();
      return;
    }
    if (relative === null) {
      await notFound(reply, request.url);
      return;
    }
    if (relative !== '' && (await isFile(path.join(root, relative)))) {
      await reply.sendFile(relative);
      return;
    }
    // A missing file (it has an extension) is a 404; any other path is a page of the app.
    if (path.posix.extname(relative) !== '') {
      await notFound(reply, request.url);
      return;
    }
    await reply.sendFile('index.html');
  };
  fastify.get('/', serve);
  fastify.get('/*', serve);
}

async function notFound(reply: FastifyReply, url: string): Promise<void> {
  const error = new ApiError('not_found', `Nothing at ${url.split('?')[0] ?? url}`);
  await reply.code(error.status).header('cache-control', 'no-store').send(error.toBody());
}
