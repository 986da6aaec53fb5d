import { INT4_MAX } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  isISO8601,
} from 'class-validator';
import { BudgetResponse } from '../budgets/budgets.dto.js';
import { PageQuery } from '../common/pagination.js';
import {
  IsModelName,
  IsModelPattern,
  IsoDateQuery,
  NullOr,
  NullableOptional,
} from '../common/validators.js';
import { TeamResponse } from '../teams/teams.dto.js';
import { TokenResponse } from '../tokens/tokens.dto.js';

export class MyTeamResponse extends TeamResponse {
  @ApiProperty({
    type: [BudgetResponse],
    description: "The budgets that cover you here: the team's, yours in it, your tokens'",
  })
  budgets!: BudgetResponse[];
}

export class MyTeamList {
  @ApiProperty({ type: [TeamResponse] }) items!: TeamResponse[];
}

export class CreateMyTokenDto {
  @ApiProperty({ example: 'laptop', maxLength: 128 })
  @IsString()
  @Length(1, 128, { message: 'name must be 1 to 128 characters' })
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @ApiPropertyOptional({
    type: [String],
    description:
      "Models it may call, each within the team's models; absent = the team's models (empty = every model, only if the team allows every model)",
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ArrayUnique()
  @IsModelPattern({ each: true })
  models?: string[];

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    description:
      "Requests per minute, at most the team's; absent = the team's; null = none (only if the team has no cap)",
  })
  @NullableOptional()
  @IsInt({ message: 'rateLimit must be a whole number of requests per minute, or null' })
  @Min(1, { message: 'rateLimit must be at least 1, or null' })
  @Max(1_000_000, { message: 'rateLimit must be at most 1000000, or null' })
  rateLimit?: number | null;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      "When it stops working, no later than the team's maxTokenDays from now; absent = that latest day (or never if the team has no limit); null = never (only if the team has no limit)",
  })
  @IsOptional()
  @NullOr(
    (value) => typeof value === 'string' && isISO8601(value, { strict: true }),
    'an ISO 8601 date and time, or null for never',
  )
  expiresAt?: string | null;
}

export class MyTokenPage extends PageOf(TokenResponse) {}

export class MyUsageQuery extends PageQuery {
  @ApiPropertyOptional({ description: 'One of your tokens' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  tokenId?: number;

  @ApiPropertyOptional({ description: 'The model the client asked for' })
  @IsOptional()
  @IsModelName()
  model?: string;

  @ApiPropertyOptional({ description: 'HTTP status the client got' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(599)
  status?: number;

  @ApiPropertyOptional({ format: 'date-time' })
  @IsoDateQuery()
  from?: string;

  @ApiPropertyOptional({ format: 'date-time' })
  @IsoDateQuery()
  to?: string;
}
