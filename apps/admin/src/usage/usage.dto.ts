import { INT4_MAX } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { PageQuery } from '../common/pagination.js';
import { IsModelName, IsoDateQuery } from '../common/validators.js';

export const SUMMARY_GROUPS = ['day', 'model', 'token', 'channel', 'team'] as const;
export type SummaryGroup = (typeof SUMMARY_GROUPS)[number];

class UsageFilterQuery extends PageQuery {
  @ApiPropertyOptional()
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  tokenId?: number;

  @ApiPropertyOptional()
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  channelId?: number;

  @ApiPropertyOptional({ description: 'Only requests paid by this team' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  teamId?: number;

  @ApiPropertyOptional({ description: 'The model the client asked for' })
  @IsOptional()
  @IsModelName()
  model?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Requests at or after this time' })
  @IsoDateQuery()
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Requests before this time' })
  @IsoDateQuery()
  to?: string;
}

export class UsageLogsQuery extends UsageFilterQuery {
  @ApiPropertyOptional({ description: 'HTTP status the client got, e.g. 200 or 429' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(599)
  status?: number;
}

export class UsageSummaryQuery {
  @ApiProperty({ enum: SUMMARY_GROUPS })
  @IsIn(SUMMARY_GROUPS, { message: `groupBy must be one of ${SUMMARY_GROUPS.join(', ')}` })
  groupBy!: SummaryGroup;

  @ApiPropertyOptional({ format: 'date-time', description: 'Default: 30 days before `to`' })
  @IsoDateQuery()
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Default: now' })
  @IsoDateQuery()
  to?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  tokenId?: number;

  @ApiPropertyOptional()
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  channelId?: number;

  @ApiPropertyOptional({ description: 'Only requests paid by this team' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  teamId?: number;
}

export class UsageLogResponse {
  @ApiProperty() id!: number;
  @ApiProperty() requestId!: string;
  @ApiProperty({ type: Number, nullable: true }) tokenId!: number | null;
  @ApiProperty({ type: String, nullable: true }) tokenName!: string | null;
  @ApiProperty({ type: Number, nullable: true }) channelId!: number | null;
  @ApiProperty({ type: String, nullable: true }) channelName!: string | null;
  @ApiProperty({ type: Number, nullable: true }) channelKeyId!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'The team that paid' })
  teamId!: number | null;
  @ApiProperty({ example: 'chat.completions' }) endpoint!: string;
  @ApiProperty({ description: 'The model that served: the one asked for, or its fallback' })
  model!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The model the client asked for, when a fallback of it served; null otherwise',
  })
  requestedModel!: string | null;
  @ApiProperty({ type: String, nullable: true }) upstreamModel!: string | null;
  @ApiProperty() promptTokens!: number;
  @ApiProperty() completionTokens!: number;
  @ApiProperty({ description: 'True when the upstream reported nothing and a tokenizer counted' })
  tokensCounted!: boolean;
  @ApiProperty({ description: 'Micro-dollars' }) cost!: number;
  @ApiProperty() status!: number;
  @ApiProperty({ type: String, nullable: true }) errorCode!: string | null;
  @ApiProperty() latencyMs!: number;
  @ApiProperty({ type: Number, nullable: true }) firstByteMs!: number | null;
  @ApiProperty() stream!: boolean;
  @ApiProperty() attempts!: number;
  @ApiProperty({ type: String, nullable: true }) clientIp!: string | null;
  @ApiProperty() requestedAt!: Date;
}

/**
 * The usage list counts its matches up to this many (the dashboard's CSV export takes as
 * many): counting every row of a table of fifty million took 16 s a page
 * (docs/capacity.md, "Usage at volume").
 */
export const COUNTED_AT_MOST = 10_000;

export class UsageLogPage extends PageOf(UsageLogResponse) {
  @ApiProperty({
    description: `More requests match than were counted: \`total\` is then ${COUNTED_AT_MOST}, and a narrower filter (a time range, a token) counts them all`,
  })
  totalCapped!: boolean;
}

export class UsageTotals {
  @ApiProperty() requests!: number;
  @ApiProperty({ description: 'Requests answered with a status of 400 or more' }) failures!: number;
  @ApiProperty() promptTokens!: number;
  @ApiProperty() completionTokens!: number;
  @ApiProperty({ description: 'Micro-dollars' }) cost!: number;
}

export class UsageGroup extends UsageTotals {
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The day (YYYY-MM-DD, UTC), model, token id, channel id or team id; null = none',
  })
  key!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Token, channel or team name' })
  label!: string | null;
}

export class UsageSummaryResponse {
  @ApiProperty({ enum: SUMMARY_GROUPS }) groupBy!: SummaryGroup;
  @ApiProperty() from!: Date;
  @ApiProperty() to!: Date;
  @ApiProperty({ type: [UsageGroup] }) items!: UsageGroup[];
  @ApiProperty({ type: UsageTotals }) totals!: UsageTotals;
}
