import { INT4_MAX } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  BUDGET_LEVELS,
  BUDGET_PERIODS,
  type BudgetLevelName,
  type BudgetPeriodName,
} from '@switchyard/domain';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { PageQuery } from '../common/pagination.js';
import { IsMicroDollars, NullableOptional } from '../common/validators.js';

const idRule = (field: string, levels: string) =>
  `${field} must be a positive integer (needed for level ${levels})`;

export class SetBudgetDto {
  @ApiProperty({ enum: BUDGET_LEVELS, description: 'What it covers' })
  @IsIn(BUDGET_LEVELS, { message: `level must be one of ${BUDGET_LEVELS.join(', ')}` })
  level!: BudgetLevelName;

  @ApiPropertyOptional({ description: 'The token (level `token`)' })
  @IsOptional()
  @IsInt({ message: idRule('tokenId', 'token') })
  @Min(1, { message: idRule('tokenId', 'token') })
  @Max(INT4_MAX, { message: idRule('tokenId', 'token') })
  tokenId?: number;

  @ApiPropertyOptional({ description: 'The team (levels `team` and `member`)' })
  @IsOptional()
  @IsInt({ message: idRule('teamId', 'team or member') })
  @Min(1, { message: idRule('teamId', 'team or member') })
  @Max(INT4_MAX, { message: idRule('teamId', 'team or member') })
  teamId?: number;

  @ApiPropertyOptional({ description: 'The member within the team (level `member`)' })
  @IsOptional()
  @IsInt({ message: idRule('userId', 'member') })
  @Min(1, { message: idRule('userId', 'member') })
  @Max(INT4_MAX, { message: idRule('userId', 'member') })
  userId?: number;

  @ApiProperty({
    minimum: 0,
    example: 50_000_000,
    description:
      'Micro-dollars per period (1 USD = 1,000,000), a JSON number like token quotas. Below what was already spent this period is allowed: it applies at once, and the reply says so in `warning`.',
  })
  @IsMicroDollars()
  amount!: number;

  @ApiProperty({
    enum: BUDGET_PERIODS,
    description:
      'When it resets: `none` never; `day`, `week` (Monday), `month` at midnight in BUDGET_TIME_ZONE',
  })
  @IsIn(BUDGET_PERIODS, { message: `period must be one of ${BUDGET_PERIODS.join(', ')}` })
  period!: BudgetPeriodName;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    maximum: 100,
    description: 'Percent of the amount at which one soft alert per period fires; null = none',
  })
  @NullableOptional()
  @IsInt({ message: 'softPercent must be a whole percent from 1 to 100, or null' })
  @Min(1, { message: 'softPercent must be a whole percent from 1 to 100, or null' })
  @Max(100, { message: 'softPercent must be a whole percent from 1 to 100, or null' })
  softPercent?: number | null;
}

export class ListBudgetsQuery extends PageQuery {
  @ApiPropertyOptional({
    description: "Only this team's budgets (its own, its members', its tokens')",
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  teamId?: number;

  @ApiPropertyOptional({ enum: BUDGET_LEVELS })
  @IsOptional()
  @IsIn(BUDGET_LEVELS, { message: `level must be one of ${BUDGET_LEVELS.join(', ')}` })
  level?: BudgetLevelName;
}

export class BudgetResponse {
  @ApiProperty() id!: number;
  @ApiProperty({
    example: 'member:3:7',
    description: '`token:<id>`, `member:<team>:<user>`, `team:<id>` or `gateway`',
  })
  subject!: string;
  @ApiProperty({ enum: BUDGET_LEVELS }) level!: BudgetLevelName;
  @ApiProperty({ type: Number, nullable: true }) teamId!: number | null;
  @ApiProperty({ type: Number, nullable: true }) userId!: number | null;
  @ApiProperty({ type: Number, nullable: true }) tokenId!: number | null;
  @ApiProperty({ description: 'What it covers, by name (token, member, team), or "Gateway"' })
  label!: string;
  @ApiProperty({ description: 'Micro-dollars per period' }) amount!: number;
  @ApiProperty({ enum: BUDGET_PERIODS }) period!: BudgetPeriodName;
  @ApiProperty({ type: Number, nullable: true }) softPercent!: number | null;
  @ApiProperty({ description: 'Micro-dollars settled this period' }) spent!: number;
  @ApiProperty({ description: 'Micro-dollars left this period (0 when spent)' }) remaining!: number;
  @ApiProperty({ description: 'Spent as a percent of the amount (100 when the amount is 0)' })
  percent!: number;
  @ApiProperty({ description: 'Requests it covers are refused until it resets' })
  exceeded!: boolean;
  @ApiProperty({ description: 'At or past the soft threshold' }) softReached!: boolean;
  @ApiProperty({ description: 'Start of this period (1970-01-01 for `none`)' })
  periodStart!: Date;
  @ApiProperty({ type: Date, nullable: true, description: 'When it resets; null for `none`' })
  resetsAt!: Date | null;
  @ApiProperty() updatedAt!: Date;
}

export class SetBudgetResponse extends BudgetResponse {
  @ApiPropertyOptional({
    description: 'Set when the amount is already spent this period: it applies at once',
  })
  warning?: string;
}

export class BudgetPage extends PageOf(BudgetResponse) {}
