import { Module, type DynamicModule } from '@nestjs/common';
import { type UnpricedModelPolicy } from '@switchyard/config';
import { PriceCacheModule } from '@switchyard/gateway-store/prices';
import { PriceList, UNPRICED_MODEL_POLICY } from './price-list.js';

@Module({})
export class PricingModule {
  /** `routing`: the app's RoutingModule, for the names channels map a model to. */
  static forRoot(policy: UnpricedModelPolicy, routing: DynamicModule): DynamicModule {
    return {
      module: PricingModule,
      imports: [PriceCacheModule, routing],
      providers: [{ provide: UNPRICED_MODEL_POLICY, useValue: policy }, PriceList],
      exports: [PriceList],
    };
  }
}
