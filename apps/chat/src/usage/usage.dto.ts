import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** How far back the daily usage goes: a year at most, today included. */
export const MAX_USAGE_DAYS = 366;

export class UsageDaysQuery {
  @ApiPropertyOptional({ default: 30, minimum: 1, maximum: MAX_USAGE_DAYS })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_USAGE_DAYS)
  days: number = 30;
}

export class UsageDayResponse {
  @ApiProperty({ description: 'The UTC day, YYYY-MM-DD', example: '2026-11-25' }) day!: string;
  @ApiProperty({ description: 'Replies received from the upstream' }) requests!: number;
  @ApiProperty() promptTokens!: number;
  @ApiProperty() completionTokens!: number;
  @ApiProperty() totalTokens!: number;
}

export class UsageModelResponse {
  @ApiProperty({ description: 'The model that replied', example: 'gpt-4o' }) model!: string;
  @ApiProperty({ description: 'Replies received from the upstream' }) requests!: number;
  @ApiProperty() promptTokens!: number;
  @ApiProperty() completionTokens!: number;
  @ApiProperty() totalTokens!: number;
}

const MODELS_DESCRIPTION =
  'Usage per model over the whole range, most tokens first; usage recorded before models were ' +
  'counted apart (docs/architecture.md) is in the days but not here';

export class UsageDaysResponse {
  @ApiProperty({
    type: [UsageDayResponse],
    description: 'Every day of the range, oldest first; a day without replies counts zero',
  })
  items!: UsageDayResponse[];
  @ApiProperty({ description: 'How many days there are: as many as asked' }) total!: number;
  @ApiProperty({ type: [UsageModelResponse], description: MODELS_DESCRIPTION })
  models!: UsageModelResponse[];
}

export class AdminUsageDayResponse extends UsageDayResponse {
  @ApiProperty({ description: 'Users who sent a message that day' }) users!: number;
}

/** How many models the administrators' overview lists. */
export const TOP_MODELS = 10;

export class AdminUsageResponse {
  @ApiProperty({
    type: [AdminUsageDayResponse],
    description: "Every day of the range, oldest first: every user's usage summed",
  })
  items!: AdminUsageDayResponse[];
  @ApiProperty({ description: 'How many days there are: as many as asked' }) total!: number;
  @ApiProperty({ description: 'Users who sent a message in the range' }) users!: number;
  @ApiProperty({
    type: [UsageModelResponse],
    description: `The ${TOP_MODELS} models with the most tokens in the range, most first`,
  })
  models!: UsageModelResponse[];
}
