import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { type ModelPrice } from '@switchyard/db';
import { AuditService } from '../audit/audit.service.js';
import { type Actor } from '../common/actor.js';
import { skipTake, type Page } from '@switchyard/service';
import { ChangeEvents } from '../events/change-events.js';
import { PricesRepository } from './prices.repository.js';
import {
  type ListPricesQuery,
  type ListUnpricedQuery,
  type PriceResponse,
  type UnpricedModel,
  type PutPricesDto,
  type PutPricesResult,
} from './prices.dto.js';

/** Model prices in micro-dollars per million tokens; metering reads them to cost requests. */
@Injectable()
export class PricesService {
  constructor(
    private readonly prices: PricesRepository,
    private readonly audit: AuditService,
    private readonly events: ChangeEvents,
  ) {}

  async list(query: ListPricesQuery): Promise<Page<PriceResponse>> {
    const { rows, total } = await this.prices.listByModel(skipTake(query));
    return { items: rows.map(toPriceResponse), total };
  }

  /** Models clients used that have no price: metering billed them at DEFAULT_MODEL_PRICE. */
  async listUnpriced(query: ListUnpricedQuery): Promise<Page<UnpricedModel>> {
    const { rows, total } = await this.prices.listUnpriced(query.days, skipTake(query));
    return {
      items: rows.map((row) => ({
        model: row.model,
        requests: Number(row.requests),
        cost: Number(row.cost),
        lastUsedOn: row.lastUsedOn,
      })),
      total,
    };
  }

  async put(actor: Actor, dto: PutPricesDto): Promise<PutPricesResult> {
    const models = dto.items.map((item) => item.model);
    const repeated = models.find((model, index) => models.indexOf(model) !== index);
    if (repeated !== undefined) {
      const message = `items lists the model "${repeated}" more than once`;
      throw new ApiError('validation_failed', message, [{ field: 'items', message }]);
    }
    const mode = dto.mode ?? 'merge';
    const result = await this.prices.transaction(async (db) => {
      const deleted = mode === 'replace' ? await this.prices.deleteAllExcept(db, models) : 0;
      for (const item of dto.items) await this.prices.upsert(db, item);
      await this.audit.record(
        {
          actor,
          action: 'price.update',
          target: { type: 'price', id: dto.items.length === 1 ? models[0] : null },
          details: {
            mode,
            prices: dto.items.slice(0, 200).map((item) => ({ ...item })),
            upserted: dto.items.length,
            deleted,
          },
        },
        db,
      );
      return { upserted: dto.items.length, deleted };
    });
    if (result.upserted + result.deleted > 0) {
      await this.events.priceChanged(
        result.upserted === 1 && result.deleted === 0 ? models[0] : undefined,
      );
    }
    return result;
  }

  async delete(actor: Actor, model: string): Promise<void> {
    await this.prices.transaction(async (db) => {
      const removed = await this.prices.delete(db, model);
      if (!removed) throw new ApiError('not_found', `No price for the model "${model}"`);
      await this.audit.record(
        {
          actor,
          action: 'price.delete',
          target: { type: 'price', id: model },
          details: { inputPrice: removed.inputPrice, outputPrice: removed.outputPrice },
        },
        db,
      );
    });
    await this.events.priceChanged(model);
  }
}

function toPriceResponse(row: ModelPrice): PriceResponse {
  return {
    model: row.model,
    inputPrice: row.inputPrice,
    outputPrice: row.outputPrice,
    cachedInputPrice: row.cachedInputPrice,
    updatedAt: row.updatedAt,
  };
}
