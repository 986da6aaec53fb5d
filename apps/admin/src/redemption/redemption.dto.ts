import { PageOf } from '@switchyard/service/openapi';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsInt,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
  ValidateBy,
  isISO8601,
} from 'class-validator';
import { PageQuery } from '../common/pagination.js';
import { IsMicroDollars, NullOr } from '../common/validators.js';

export const MAX_CODES_PER_BATCH = 1000;

export class CreateRedemptionBatchDto {
  @ApiProperty({ minimum: 1, example: 5_000_000, description: 'Micro-dollars each code credits' })
  @IsMicroDollars()
  @ValidateBy({
    name: 'isPositive',
    validator: {
      validate: (value: unknown) => typeof value !== 'number' || value > 0,
      defaultMessage: () => 'value must be more than 0',
    },
  })
  value!: number;

  @ApiProperty({ minimum: 1, maximum: MAX_CODES_PER_BATCH })
  @IsInt({ message: `count must be a whole number from 1 to ${MAX_CODES_PER_BATCH}` })
  @Min(1, { message: `count must be a whole number from 1 to ${MAX_CODES_PER_BATCH}` })
  @Max(MAX_CODES_PER_BATCH, {
    message: `count must be a whole number from 1 to ${MAX_CODES_PER_BATCH}`,
  })
  count!: number;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the codes stop working (in the future); null = never',
  })
  @NullOr(
    (value) => typeof value === 'string' && isISO8601(value, { strict: true }),
    'an ISO 8601 date and time, or null for never',
  )
  expiresAt!: string | null;

  @ApiPropertyOptional({ maxLength: 200, example: 'conference give-away' })
  @IsOptional()
  @IsString()
  @Length(0, 200, { message: 'note must be at most 200 characters' })
  note?: string;
}

export class RedemptionBatchResponse {
  @ApiProperty() id!: number;
  @ApiProperty({ description: 'Micro-dollars each code credits' }) value!: number;
  @ApiProperty() count!: number;
  @ApiProperty({ description: 'Codes redeemed' }) used!: number;
  @ApiProperty({ description: 'Codes not redeemed yet (expired ones included)' }) unused!: number;
  @ApiProperty() note!: string;
  @ApiProperty({ type: Date, nullable: true }) expiresAt!: Date | null;
  @ApiProperty() expired!: boolean;
  @ApiProperty() createdById!: number;
  @ApiProperty() createdAt!: Date;
}

export class CreatedRedemptionBatchResponse {
  @ApiProperty({ type: RedemptionBatchResponse }) batch!: RedemptionBatchResponse;
  @ApiProperty({
    type: [String],
    example: ['SY-7K2M-Q9XH-4TRD'],
    description: 'The codes: shown this once, stored only as their SHA-256',
  })
  codes!: string[];
  @ApiProperty({
    description:
      'The same codes as CSV (`code,value_micro_dollars,expires_at,batch_id`): the only export there is',
  })
  csv!: string;
}

export class RedemptionBatchPage extends PageOf(RedemptionBatchResponse) {}

export class RedemptionCodeResponse {
  @ApiProperty() id!: number;
  @ApiProperty({ description: 'The only part of the code kept readable' }) lastFour!: string;
  @ApiProperty({ type: Date, nullable: true }) redeemedAt!: Date | null;
  @ApiProperty({ type: Number, nullable: true }) redeemedById!: number | null;
  @ApiProperty({ type: String, nullable: true }) redeemedBy!: string | null;
  @ApiProperty({ type: Number, nullable: true }) redeemedTeamId!: number | null;
}

export class RedemptionCodePage extends PageOf(RedemptionCodeResponse) {}

export class RedeemCodeDto {
  @ApiProperty({
    example: 'SY-7K2M-Q9XH-4TRD',
    description: 'Case, spaces and dashes do not matter',
  })
  @IsString()
  @Length(1, 64, { message: 'code must be 1 to 64 characters' })
  code!: string;
}

export class RedeemedResponse {
  @ApiProperty({ description: 'Micro-dollars credited' }) credited!: number;
  @ApiProperty({ description: "The team's balance after it" }) balance!: number;
  @ApiProperty() entryId!: number;
}

export class RedemptionQuery extends PageQuery {}
