import { type Prisma } from '@switchyard/db';

/** The Prisma client or an open transaction: repository methods take either. */
export type Db = Prisma.TransactionClient;
