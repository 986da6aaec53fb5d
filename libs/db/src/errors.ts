import { Prisma } from './generated/prisma/client.js';

/** A unique constraint refused the write (for example a duplicate name). */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

/** The row to update or delete does not exist (or no longer matches the filter). */
export function isRecordNotFound(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025';
}
