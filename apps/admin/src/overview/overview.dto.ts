import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ChannelStatus } from '@switchyard/db';
import { INT4_MAX } from '@switchyard/service';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { IsoDateQuery } from '../common/validators.js';

export const SERIES_RANGES = ['24h', '7d', '30d'] as const;
export type SeriesRange = (typeof SERIES_RANGES)[number];
export const SERIES_SPLITS = ['model', 'channel', 'token', 'team'] as const;
export type SeriesSplit = (typeof SERIES_SPLITS)[number];

export class UsageSeriesQuery {
  @ApiPropertyOptional({ enum: SERIES_RANGES, default: '24h' })
  @IsOptional()
  @IsIn(SERIES_RANGES, { message: `range must be one of ${SERIES_RANGES.join(', ')}` })
  range: SeriesRange = '24h';

  @ApiPropertyOptional({ enum: SERIES_SPLITS, default: 'model' })
  @IsOptional()
  @IsIn(SERIES_SPLITS, { message: `splitBy must be one of ${SERIES_SPLITS.join(', ')}` })
  splitBy: SeriesSplit = 'model';

  @ApiPropertyOptional({ format: 'date-time', description: 'End of the range; default: now' })
  @IsoDateQuery()
  to?: string;

  @ApiPropertyOptional({ description: 'Only requests paid by this team' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  teamId?: number;
}

export class UsageSeriesLine {
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Model, channel id, token id or team id; null for the rest taken together',
  })
  key!: string | null;
  @ApiProperty({ description: 'What to call the line (a name, or "Other")' }) label!: string;
  @ApiProperty({ type: [Number], description: 'One value per bucket' }) requests!: number[];
  @ApiProperty({ type: [Number], description: 'Requests answered with a status of 400 or more' })
  failures!: number[];
  @ApiProperty({ type: [Number] }) promptTokens!: number[];
  @ApiProperty({ type: [Number] }) completionTokens!: number[];
  @ApiProperty({ type: [Number], description: 'Micro-dollars' }) cost!: number[];
}

export class UsageSeriesResponse {
  @ApiProperty({ enum: SERIES_RANGES }) range!: SeriesRange;
  @ApiProperty({ enum: SERIES_SPLITS }) splitBy!: SeriesSplit;
  @ApiProperty({ description: 'Width of each bucket' }) bucketSeconds!: number;
  @ApiProperty({ type: [String], format: 'date-time', description: 'Start of each bucket (UTC)' })
  buckets!: Date[];
  @ApiProperty({
    type: [UsageSeriesLine],
    description: 'The largest groups by cost (then requests); the rest in one line',
  })
  lines!: UsageSeriesLine[];
}

export const CHANNEL_HEALTH_STATES = [
  'routing',
  'cooling_down',
  'breaker_open',
  'no_keys',
  'disabled',
  'auto_disabled',
  'unknown',
] as const;
export type ChannelHealthState = (typeof CHANNEL_HEALTH_STATES)[number];

export class KeyHealth {
  @ApiProperty() id!: number;
  @ApiProperty() lastFour!: string;
  @ApiProperty({ enum: ChannelStatus, enumName: 'ChannelStatus' }) status!: ChannelStatus;
  @ApiProperty({ type: String, nullable: true }) statusReason!: string | null;
  @ApiProperty({ type: Date, nullable: true }) statusChangedAt!: Date | null;
  @ApiProperty({
    type: Date,
    nullable: true,
    description: 'Cooling down after a 429 until then; null when it is not',
  })
  coolingUntil!: Date | null;
}

export class ChannelHealth {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ChannelStatus, enumName: 'ChannelStatus' }) status!: ChannelStatus;
  @ApiProperty({
    enum: CHANNEL_HEALTH_STATES,
    description:
      '`routing`: takes traffic; `cooling_down`: every key waits after a 429; `breaker_open`: enabled but failing, out of routing until a probe succeeds; `no_keys`: no enabled key; `unknown`: the router has published nothing yet',
  })
  state!: ChannelHealthState;
  @ApiProperty({ type: String, nullable: true }) statusReason!: string | null;
  @ApiProperty({ type: Date, nullable: true }) statusChangedAt!: Date | null;
  @ApiProperty({ type: [KeyHealth] }) keys!: KeyHealth[];
}

export class ChannelHealthResponse {
  @ApiProperty({ type: Number, nullable: true, description: "The router's snapshot read" })
  snapshotVersion!: number | null;
  @ApiProperty({ type: Date, nullable: true }) snapshotAt!: Date | null;
  @ApiProperty({ type: [ChannelHealth], description: 'Highest priority first' })
  channels!: ChannelHealth[];
}
