import { Injectable } from '@nestjs/common';
import { PrismaService } from '@switchyard/db';
import { type PriceEntry } from '@switchyard/domain';

@Injectable()
export class PricingRepository {
  constructor(private readonly prisma: PrismaService) {}

  async findAllPrices(): Promise<PriceEntry[]> {
    const rows = await this.prisma.modelPrice.findMany({
      select: { model: true, inputPrice: true, outputPrice: true, cachedInputPrice: true },
    });
    return rows.map((row) => ({
      model: row.model,
      inputPrice: row.inputPrice,
      outputPrice: row.outputPrice,
      cachedInputPrice: row.cachedInputPrice,
    }));
  }
}
