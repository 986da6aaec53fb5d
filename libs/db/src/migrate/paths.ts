import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** `prisma/` at the repository root, from both `src/migrate` and `dist/migrate`. */
export const prismaDirectory = path.resolve(here, '../../../../prisma');

export function defaultMigrationsDirectory(): string {
  return path.join(prismaDirectory, 'migrations');
}

export const schemaPath = path.join(prismaDirectory, 'schema.prisma');
