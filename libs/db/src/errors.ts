import { Prisma } from './generated/prisma/client.js';

/** A unique constraint refused the write (for example a duplicate name). */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

/** The row to update or delete does not exist (or no longer matches the filter). */
export function isRecordNotFound(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025';
}

/**
 * A deadlock or serialization failure (SQLSTATE 40P01, 40001): the transaction was rolled
 * back and running it again may succeed.
 */
export function isTransactionConflict(error: unknown): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  if (error.code === 'P2034') return true;
  const cause = (error.meta?.driverAdapterError as { cause?: { kind?: unknown } } | undefined)
    ?.cause;
  return cause?.kind === 'TransactionWriteConflict';
}
