import { ApiProperty } from '@nestjs/swagger';
import { ValidateBy } from 'class-validator';

/** Six decimals: a multiplier is stored exactly in parts per million. */
const RATIO = /^(\d{1,4})(?:\.(\d{1,6}))?$/;
export const MAX_MULTIPLIER_PPM = 1_000_000_000;
export const MULTIPLIER_RULE =
  'a decimal ratio from 0 to 1000 with at most 6 decimals, such as 0.8 or "1.25" (1 = prices as listed)';

/**
 * A ratio as typed (`"0.8"`, `1.25`) in parts per million, converted digit by digit so no
 * binary fraction rounds it; null when it is not one.
 */
export function multiplierPpm(value: unknown): number | null {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string') return null;
  const match = RATIO.exec(text.trim());
  if (!match) return null;
  const ppm = Number(match[1]) * 1_000_000 + Number((match[2] ?? '').padEnd(6, '0'));
  return ppm <= MAX_MULTIPLIER_PPM ? ppm : null;
}

/** Parts per million as the shortest decimal ratio (`800000` → `"0.8"`). */
export function ratioText(ppm: number): string {
  const whole = Math.floor(ppm / 1_000_000);
  const fraction = String(ppm % 1_000_000)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : String(whole);
}

export class SetPriceGroupDto {
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'number' }],
    example: '0.8',
    description: `The price multiplier: ${MULTIPLIER_RULE}. Stored exactly as parts per million.`,
  })
  @ValidateBy({
    name: 'isMultiplier',
    validator: {
      validate: (value: unknown) => multiplierPpm(value) !== null,
      defaultMessage: () => `multiplier must be ${MULTIPLIER_RULE}`,
    },
  })
  multiplier!: string | number;
}

export class PriceGroupResponse {
  @ApiProperty({ example: 'vip' }) name!: string;
  @ApiProperty({ example: '0.8', description: 'The ratio as a decimal string' })
  multiplier!: string;
  @ApiProperty({ example: 800_000, description: 'The same in parts per million (as stored)' })
  multiplierPpm!: number;
  @ApiProperty({ description: 'Teams in this group' }) teamCount!: number;
  @ApiProperty({ type: Date, nullable: true }) updatedAt!: Date | null;
}

export class PriceGroupList {
  @ApiProperty({ type: [PriceGroupResponse] }) items!: PriceGroupResponse[];
}
