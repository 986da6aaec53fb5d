import { Inject, Injectable } from '@nestjs/common';
import { SQL_POOL, type SqlPool } from '@switchyard/db/sql';
import { type PriceEntry } from '@switchyard/domain';

const LIST_PRICES = `SELECT model, "inputPrice", "outputPrice", "cachedInputPrice" FROM "ModelPrice"`;

/**
 * The price table as stored, for the copies in memory of the edge and of metering (plain
 * SQL, see libs/db/src/sql: the edge runs without the Prisma client).
 */
@Injectable()
export class ModelPricesRepository {
  constructor(@Inject(SQL_POOL) private readonly pool: SqlPool) {}

  async list(): Promise<PriceEntry[]> {
    return (await this.pool.query<PriceEntry>(LIST_PRICES)).rows;
  }
}
