import { PageOf } from '@switchyard/service/openapi';
import { ApiProperty } from '@nestjs/swagger';
import { BalanceEntryKind } from '@switchyard/db';
import { IsString, Length, Matches, ValidateBy } from 'class-validator';
import { IsMicroDollars } from '../common/validators.js';

export class CreditBalanceDto {
  @ApiProperty({
    minimum: 1,
    example: 10_000_000,
    description: 'Micro-dollars to add (1 USD = 1,000,000)',
  })
  @IsMicroDollars()
  @ValidateBy({
    name: 'isPositive',
    validator: {
      validate: (value: unknown) => typeof value !== 'number' || value > 0,
      defaultMessage: () => 'amount must be more than 0',
    },
  })
  amount!: number;

  @ApiProperty({ maxLength: 200, example: 'invoice 2026-11' })
  @IsString()
  @Length(1, 200, { message: 'reason must be 1 to 200 characters' })
  @Matches(/\S/, { message: 'reason must not be blank' })
  reason!: string;
}

export class AdjustBalanceDto {
  @ApiProperty({
    example: -2_500_000,
    description:
      'Signed micro-dollars, not 0; the balance may not go below zero (409 `balance_below_zero`)',
  })
  @ValidateBy({
    name: 'isSignedMicroDollars',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'number' && Number.isSafeInteger(value) && value !== 0,
      defaultMessage: () =>
        'amount must be a whole number of micro-dollars other than 0 (negative to take off)',
    },
  })
  amount!: number;

  @ApiProperty({ maxLength: 200, example: 'refund of a failed batch' })
  @IsString()
  @Length(1, 200, { message: 'reason must be 1 to 200 characters' })
  @Matches(/\S/, { message: 'reason must not be blank' })
  reason!: string;
}

export class BalanceEntryResponse {
  @ApiProperty() id!: number;
  @ApiProperty() teamId!: number;
  @ApiProperty({ enum: BalanceEntryKind, enumName: 'BalanceEntryKind' }) kind!: BalanceEntryKind;
  @ApiProperty({ description: 'Signed micro-dollars' }) amount!: number;
  @ApiProperty({ description: 'The balance this entry left' }) balanceAfter!: number;
  @ApiProperty() reason!: string;
  @ApiProperty({ type: Number, nullable: true, description: 'Who acted; null for a request' })
  actorId!: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'The request a debit paid for' })
  requestId!: string | null;
  @ApiProperty() createdAt!: Date;
}

export class BalanceEntryPage extends PageOf(BalanceEntryResponse) {}
