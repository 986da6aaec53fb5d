import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The chat web app: built into dist/public, which the web service serves at `/`.
// `pnpm dev:client` serves it with hot reload and sends /api to the web app on port 8080.

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: '/',
  publicDir: path.join(here, 'public'),
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.join(here, '..', 'dist', 'public'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
});
