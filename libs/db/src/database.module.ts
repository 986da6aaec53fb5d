import { Global, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { type DatabaseOptions } from './database-options.js';
import { PrismaService } from './prisma.service.js';
import { ReportingDatabase } from './reporting-database.js';

/** Readiness: the database answers a trivial query. */
@Injectable()
export class DatabaseReadiness {
  readonly name = 'postgres';
  constructor(private readonly prisma: PrismaService) {}

  async check(): Promise<void> {
    await this.prisma.$queryRaw`SELECT 1`;
  }
}

@Global()
@Module({})
export class DatabaseModule {
  static forRoot(options: DatabaseOptions): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        { provide: PrismaService, useFactory: () => new PrismaService(options) },
        {
          provide: ReportingDatabase,
          useFactory: (primary: PrismaService) => new ReportingDatabase(primary, options),
          inject: [PrismaService],
        },
        DatabaseReadiness,
      ],
      exports: [PrismaService, ReportingDatabase, DatabaseReadiness],
    };
  }
}
