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

export class UsageDaysResponse {
  @ApiProperty({
    type: [UsageDayResponse],
    description: 'Every day of the range, oldest first; a day without replies counts zero',
  })
  items!: UsageDayResponse[];
  @ApiProperty({ description: 'How many days there are: as many as asked' }) total!: number;
}
