import { Module, type DynamicModule } from '@nestjs/common';
import { type UnpricedModelPolicy } from '@switchyard/config';
import { PriceEventsController, PriceList, UNPRICED_MODEL_POLICY } from './price-list.js';
import { PricesRepository } from './prices.repository.js';

@Module({})
export class PricingModule {
  static forRoot(policy: UnpricedModelPolicy): DynamicModule {
    return {
      module: PricingModule,
      controllers: [PriceEventsController],
      providers: [
        { provide: UNPRICED_MODEL_POLICY, useValue: policy },
        PricesRepository,
        PriceList,
      ],
      exports: [PriceList],
    };
  }
}
