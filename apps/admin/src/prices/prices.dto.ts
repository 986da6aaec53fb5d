import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { PageQuery } from '../common/pagination.js';
import { PageOf } from '@switchyard/service/openapi';
import { IsModelPattern } from '../common/validators.js';

const MAX_PRICE = 2_147_483_647;
export const PRICE_MODES = ['merge', 'replace'] as const;
export type PriceMode = (typeof PRICE_MODES)[number];

export class PriceDto {
  @ApiProperty({
    example: 'gpt-4o',
    description: 'Exact model name, a prefix ending in `*` or a suffix starting with `*`',
  })
  @IsModelPattern()
  model!: string;

  @ApiProperty({ minimum: 0, description: 'Micro-dollars per million input (prompt) tokens' })
  @IsInt()
  @Min(0)
  @Max(MAX_PRICE)
  inputPrice!: number;

  @ApiProperty({ minimum: 0, description: 'Micro-dollars per million output (completion) tokens' })
  @IsInt()
  @Min(0)
  @Max(MAX_PRICE)
  outputPrice!: number;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 0,
    description:
      'Micro-dollars per million input tokens read from the provider prompt cache; null or absent: the input price',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_PRICE)
  cachedInputPrice?: number | null;
}

export class PutPricesDto {
  @ApiProperty({ type: [PriceDto] })
  @IsArray()
  @ArrayMaxSize(10_000)
  @ValidateNested({ each: true })
  @Type(() => PriceDto)
  items!: PriceDto[];

  @ApiPropertyOptional({
    enum: PRICE_MODES,
    default: 'merge',
    description:
      '`merge`: set the prices given, keep the others. `replace`: the table becomes exactly `items` (models not listed lose their price).',
  })
  @IsOptional()
  @IsIn(PRICE_MODES, { message: `mode must be one of ${PRICE_MODES.join(', ')}` })
  mode?: PriceMode;
}

export class ListPricesQuery extends PageQuery {}

export class ListUnpricedQuery extends PageQuery {
  @ApiPropertyOptional({
    minimum: 1,
    maximum: 366,
    default: 30,
    description: 'Days of usage to look at, today included',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(366)
  days: number = 30;
}

export class UnpricedModel {
  @ApiProperty({ example: 'my-new-model', description: 'Model name as clients requested it' })
  model!: string;

  @ApiProperty({ description: 'Successful requests in the period, billed at the default price' })
  requests!: number;

  @ApiProperty({ description: 'What they cost, in micro-dollars (DEFAULT_MODEL_PRICE applied)' })
  cost!: number;

  @ApiProperty({ example: '2026-01-31', description: 'Last day (UTC) the model was used' })
  lastUsedOn!: string;
}

export class UnpricedModelPage extends PageOf(UnpricedModel) {}

export class PriceResponse extends PriceDto {
  @ApiProperty() updatedAt!: Date;
}

export class PricePage extends PageOf(PriceResponse) {}

export class PutPricesResult {
  @ApiProperty({ description: 'Prices created or changed' }) upserted!: number;
  @ApiProperty({ description: 'Prices removed (mode `replace`)' }) deleted!: number;
}
