import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The gateway dashboard: built into dist/, which the edge serves at `/`.
// `pnpm dev` serves it with hot reload and sends /api to an edge on port 3000.

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: '/',
  publicDir: path.join(here, 'public'),
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.join(here, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:3000' },
  },
});
