import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { type DatabaseOptions } from './database-options.js';
import { createPgPool } from './pg-pool.js';
import { PrismaClient } from './generated/prisma/client.js';

/**
 * The Prisma client as a Nest provider. Connections are opened lazily by the pool and
 * closed only after the HTTP server and workers have drained (application shutdown),
 * so in-flight work never loses its database.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnApplicationShutdown {
  constructor(options: DatabaseOptions) {
    super({
      // Prisma's driver adapter sends every statement unnamed, so behind PgBouncer only the
      // pool's own concerns apply (createPgPool); the adapter ends it with the client.
      adapter: new PrismaPg(createPgPool(options), { disposeExternalPool: true }),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
  }
}
