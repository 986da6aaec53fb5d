import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { type DatabaseOptions } from './database-options.js';
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
      adapter: new PrismaPg({
        connectionString: options.url,
        max: options.poolSize,
        connectionTimeoutMillis: 5_000,
      }),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
  }
}
