import { INT4_MAX } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';
import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { TeamBilling } from '@switchyard/db';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
} from 'class-validator';
import { BudgetResponse } from '../budgets/budgets.dto.js';
import { GROUP_PATTERN, IsModelPattern, NullableOptional } from '../common/validators.js';

const BILLINGS = Object.values(TeamBilling);

export class CreateTeamDto {
  @ApiProperty({ example: 'research', maxLength: 64 })
  @IsString()
  @Length(1, 64, { message: 'name must be 1 to 64 characters' })
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @ApiPropertyOptional({
    type: [String],
    description:
      'Models the team\'s tokens may use (exact, `prefix*` or `*suffix`, docs/architecture.md, "Model patterns"); empty = every model',
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
    description: "Highest requests per minute a member's token may have; null = no cap",
  })
  @NullableOptional()
  @IsInt({ message: 'rateLimit must be a whole number of requests per minute, or null' })
  @Min(1, { message: 'rateLimit must be at least 1, or null' })
  @Max(1_000_000, { message: 'rateLimit must be at most 1000000, or null' })
  rateLimit?: number | null;

  @ApiPropertyOptional({ default: 'default', description: 'Price group (must exist)' })
  @IsOptional()
  @Matches(GROUP_PATTERN, { message: 'priceGroup must be 1 to 64 letters, digits, _ . or -' })
  priceGroup?: string;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    description:
      'Latest expiry a member may give a token, in days from its creation; null = no limit',
  })
  @NullableOptional()
  @IsInt({ message: 'maxTokenDays must be a whole number of days from 1 to 3650, or null' })
  @Min(1, { message: 'maxTokenDays must be a whole number of days from 1 to 3650, or null' })
  @Max(3650, { message: 'maxTokenDays must be a whole number of days from 1 to 3650, or null' })
  maxTokenDays?: number | null;

  @ApiPropertyOptional({
    enum: BILLINGS,
    default: 'budget',
    description: '`budget`: spends against period budgets; `balance`: spends a prepaid balance',
  })
  @IsOptional()
  @IsIn(BILLINGS, { message: `billing must be one of ${BILLINGS.join(', ')}` })
  billing?: TeamBilling;
}

export class UpdateTeamDto extends PartialType(CreateTeamDto, { skipNullProperties: false }) {}

export class AddMemberDto {
  @ApiPropertyOptional({ description: 'The account to add (role `member`); or give `username`' })
  @IsOptional()
  @IsInt({ message: 'userId must be a positive integer' })
  @Min(1, { message: 'userId must be a positive integer' })
  @Max(INT4_MAX, { message: 'userId must be a positive integer' })
  userId?: number;

  @ApiPropertyOptional({ description: 'The account to add, by name' })
  @IsOptional()
  @IsString()
  @Length(1, 64, { message: 'username must be 1 to 64 characters' })
  username?: string;
}

export class TeamMemberResponse {
  @ApiProperty() userId!: number;
  @ApiProperty() username!: string;
  @ApiProperty() disabled!: boolean;
  @ApiProperty() joinedAt!: Date;
}

export class TeamResponse {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ type: [String], description: 'Empty = every model' }) models!: string[];
  @ApiProperty({ type: Number, nullable: true }) rateLimit!: number | null;
  @ApiProperty() priceGroup!: string;
  @ApiProperty({ type: Number, nullable: true }) maxTokenDays!: number | null;
  @ApiProperty({ enum: BILLINGS }) billing!: TeamBilling;
  @ApiProperty({ description: 'Micro-dollars of prepaid balance (the sum of its ledger)' })
  balance!: number;
  @ApiProperty({ type: [TeamMemberResponse] }) members!: TeamMemberResponse[];
  @ApiProperty() tokenCount!: number;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export class TeamDetailResponse extends TeamResponse {
  @ApiProperty({
    type: [BudgetResponse],
    description: "The team's budget, its members' and its tokens', with spend this period",
  })
  budgets!: BudgetResponse[];
}

export class TeamPage extends PageOf(TeamResponse) {}
