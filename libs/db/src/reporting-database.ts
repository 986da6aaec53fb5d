import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { type PrismaClient } from './generated/prisma/client.js';
import { type DatabaseOptions } from './database-options.js';
import { PrismaService } from './prisma.service.js';

/** Where a report's reads are sent: the primary, or the replica DATABASE_READ_URL names. */
export type ReportingTarget = 'primary' | 'replica';

/**
 * The client for reports: usage listings and totals, the overview's charts. They read
 * many rows, tolerate being a few seconds behind, and never decide anything (routing,
 * quotas, billing and every read that follows a write of its own use `PrismaService`, the
 * primary). With a replica configured they go to it, so a heavy report never competes with
 * settlements for the primary; otherwise they share the primary's client. The choice is
 * made here only (docs/scaling.md, "Read replica").
 */
@Injectable()
export class ReportingDatabase implements OnApplicationShutdown {
  readonly target: ReportingTarget;
  readonly client: PrismaClient;
  private readonly replica?: PrismaService;

  constructor(primary: PrismaService, options: DatabaseOptions) {
    if (options.readUrl) {
      this.replica = new PrismaService({ url: options.readUrl, poolSize: options.poolSize });
      this.client = this.replica;
      this.target = 'replica';
    } else {
      this.client = primary;
      this.target = 'primary';
    }
  }

  /** The replica's client is this provider's own; the primary's closes with PrismaService. */
  async onApplicationShutdown(): Promise<void> {
    await this.replica?.$disconnect();
  }
}
