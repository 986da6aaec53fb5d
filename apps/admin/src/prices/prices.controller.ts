import { Body, Controller, Delete, Get, HttpCode, Param, Put, Query } from '@nestjs/common';
import {
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentActor, EDITORS, READERS, Roles } from '../auth/access.decorators.js';
import { type Actor } from '../common/actor.js';
import { ApiNotFound, ApiValidationErrors } from '../common/api-docs.js';
import {
  ListPricesQuery,
  ListUnpricedQuery,
  PricePage,
  PutPricesDto,
  PutPricesResult,
  UnpricedModelPage,
} from './prices.dto.js';
import { PricesService } from './prices.service.js';

@ApiTags('prices')
@Controller('api/prices')
export class PricesController {
  constructor(private readonly prices: PricesService) {}

  @Get()
  @Roles(...READERS)
  @ApiOperation({ summary: 'List model prices (by model name)' })
  @ApiOkResponse({ type: PricePage })
  list(@Query() query: ListPricesQuery): Promise<PricePage> {
    return this.prices.list(query);
  }

  @Get('unpriced')
  @Roles(...READERS)
  @ApiOperation({
    summary: 'List models used without a price',
    description:
      'Models clients used in the last `days` days (from the daily usage roll-ups, refreshed every few minutes) that no price matches. Metering billed them at the default price (DEFAULT_MODEL_PRICE); with UNPRICED_MODELS=refuse the edge refuses them to tokens with a quota.',
  })
  @ApiOkResponse({ type: UnpricedModelPage })
  @ApiValidationErrors()
  listUnpriced(@Query() query: ListUnpricedQuery): Promise<UnpricedModelPage> {
    return this.prices.listUnpriced(query);
  }

  @Put()
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Set model prices',
    description:
      'Upserts every price in `items` in one transaction. With `mode: "replace"` every price not in `items` is removed too, so the table becomes exactly `items`; the default `merge` keeps them. Prices are integers of micro-dollars per million tokens; an entry `prefix*` or `*suffix` prices every model it matches, the most specific entry applying (docs/architecture.md, "Model patterns"). Publishes `price.changed`.',
  })
  @ApiOkResponse({ type: PutPricesResult })
  @ApiValidationErrors()
  put(@CurrentActor() actor: Actor, @Body() dto: PutPricesDto): Promise<PutPricesResult> {
    return this.prices.put(actor, dto);
  }

  @Delete(':model')
  @HttpCode(204)
  @Roles(...EDITORS)
  @ApiOperation({ summary: "Remove one model's price", description: 'Publishes `price.changed`.' })
  @ApiParam({
    name: 'model',
    description: 'URL-encoded price entry (a model name, `prefix*` or `*suffix`)',
  })
  @ApiNoContentResponse()
  @ApiNotFound('price')
  delete(@CurrentActor() actor: Actor, @Param('model') model: string): Promise<void> {
    return this.prices.delete(actor, model);
  }
}
