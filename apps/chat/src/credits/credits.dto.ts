import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
  NotEquals,
  ValidateIf,
} from 'class-validator';
import { Optional } from '@switchyard/service';
import { PageOf, PageQueryOf } from '@switchyard/service/openapi';

export const CREDIT_KINDS = [
  'grant',
  'spend',
  'refund',
  'redeem',
  'invite',
  'plan',
  'adjust',
] as const;
export type CreditKindName = (typeof CREDIT_KINDS)[number];

/** A billion: far above any sensible balance change, far within the column's 32 bits. */
export const MAX_ADJUSTMENT = 1_000_000_000;
/** The most credits one code may carry. */
export const MAX_CODE_CREDITS = 1_000_000;
/** The most codes one batch may make. */
export const MAX_BATCH_COUNT = 1000;

const trimmed = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim() : value;

export class LedgerQuery extends PageQueryOf({ pageSize: 20, maxPageSize: 100 }) {
  @ApiPropertyOptional({ enum: CREDIT_KINDS })
  @IsOptional()
  @IsIn(CREDIT_KINDS, { message: `kind must be one of ${CREDIT_KINDS.join(', ')}` })
  kind?: CreditKindName;
}

export class BalanceResponse {
  @ApiProperty({ description: 'Credits the user has now' }) balance!: number;
}

export class CreditEntryResponse {
  @ApiProperty() id!: number;
  @ApiProperty({ enum: CREDIT_KINDS }) kind!: CreditKindName;
  @ApiProperty({ description: 'Signed: negative for a spend' }) amount!: number;
  @ApiProperty() balanceAfter!: number;
  @ApiProperty() reason!: string;
  @ApiProperty({ type: Number, nullable: true, description: 'The administrator who made it' })
  actorId!: number | null;
  @ApiProperty({ type: String, nullable: true, description: "Pairs a reply's freeze and refund" })
  requestId!: string | null;
  @ApiProperty({ type: String, nullable: true }) conversationId!: string | null;
  @ApiProperty() createdAt!: string;
}

export class LedgerPageResponse extends PageOf(CreditEntryResponse) {
  @ApiProperty({ description: 'The balance now' }) balance!: number;
}

export class RedeemDto {
  @ApiProperty({ example: 'SY-7K3M-Q9XD-2HPR' })
  @Transform(trimmed)
  @IsString({ message: 'code must be a string' })
  @Length(1, 64, { message: 'code must be 1 to 64 characters' })
  code!: string;
}

export class RedeemResponse {
  @ApiProperty({ description: 'Credits the code added (a plan code: its first period)' })
  credits!: number;
  @ApiProperty({ type: String, nullable: true, description: 'The plan a plan code put you on' })
  plan!: string | null;
  @ApiProperty() balance!: number;
}

export class AdjustCreditsDto {
  @ApiProperty({ description: 'Signed whole credits to add (negative to take away)' })
  @IsInt({ message: 'amount must be a whole number of credits' })
  @NotEquals(0, { message: 'amount must not be 0' })
  @Min(-MAX_ADJUSTMENT, { message: `amount must be at least -${MAX_ADJUSTMENT}` })
  @Max(MAX_ADJUSTMENT, { message: `amount must be at most ${MAX_ADJUSTMENT}` })
  amount!: number;

  @ApiProperty({ description: 'Why; shown in the user’s ledger' })
  @Transform(trimmed)
  @IsString({ message: 'reason must be a string' })
  @Length(1, 200, { message: 'reason must be 1 to 200 characters' })
  reason!: string;

  @ApiPropertyOptional({ default: false, description: 'Allow the balance to go below zero' })
  @Optional()
  @IsBoolean({ message: 'force must be true or false' })
  force?: boolean;
}

export class CreateCodesDto {
  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_CODE_CREDITS,
    description: 'Credits per code; leave out when the codes give a plan (planId)',
  })
  @ValidateIf((dto: CreateCodesDto) => dto.credits !== undefined || dto.planId === undefined)
  @IsInt({ message: 'credits must be a whole number of credits' })
  @Min(1, { message: 'credits must be at least 1' })
  @Max(MAX_CODE_CREDITS, { message: `credits must be at most ${MAX_CODE_CREDITS}` })
  credits?: number;

  @ApiPropertyOptional({
    description: 'The plan each code puts its redeemer on, instead of credits',
  })
  @Optional()
  @IsInt({ message: 'planId must be a plan id' })
  @Min(1, { message: 'planId must be a plan id' })
  planId?: number;

  @ApiProperty({ minimum: 1, maximum: MAX_BATCH_COUNT })
  @IsInt({ message: 'count must be a whole number' })
  @Min(1, { message: 'count must be at least 1' })
  @Max(MAX_BATCH_COUNT, { message: `count must be at most ${MAX_BATCH_COUNT}` })
  count!: number;

  @ApiPropertyOptional({
    description: 'When the codes stop working (ISO 8601); never when left out',
  })
  @Optional()
  @IsISO8601({ strict: true }, { message: 'expiresAt must be an ISO 8601 date and time' })
  expiresAt?: string;

  @ApiPropertyOptional({ default: '', description: 'What the batch is for' })
  @Optional()
  @Transform(trimmed)
  @IsString({ message: 'note must be a string' })
  @Length(0, 200, { message: 'note must be at most 200 characters' })
  note?: string;
}

export class CodeBatchResponse {
  @ApiProperty() id!: number;
  @ApiProperty({ description: 'Credits per code; 0 for plan codes' }) credits!: number;
  @ApiProperty({ type: Number, nullable: true }) planId!: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'The plan the codes give' })
  planName!: string | null;
  @ApiProperty() count!: number;
  @ApiProperty() redeemed!: number;
  @ApiProperty() note!: string;
  @ApiProperty({ type: String, nullable: true }) expiresAt!: string | null;
  @ApiProperty() createdAt!: string;
}

export class CreatedCodesResponse {
  @ApiProperty({ type: CodeBatchResponse }) batch!: CodeBatchResponse;
  @ApiProperty({ type: [String], description: 'The codes, shown this once and never again' })
  codes!: string[];
}

export class CodeBatchQuery extends PageQueryOf({ pageSize: 20, maxPageSize: 100 }) {}

export class CodeBatchPageResponse extends PageOf(CodeBatchResponse) {}

export const PLAN_PERIODS = ['day', 'month'] as const;
/** The most models one plan may include. */
export const MAX_PLAN_MODELS = 500;

const modelNames = ({ value }: { value: unknown }) =>
  Array.isArray(value)
    ? [
        ...new Set(
          (value as unknown[]).map((name) => (typeof name === 'string' ? name.trim() : name)),
        ),
      ]
    : value;

export class CreatePlanDto {
  @ApiProperty({ description: 'Shown in the ledger: "plan <name> for <period>"' })
  @Transform(trimmed)
  @IsString({ message: 'name must be a string' })
  @Length(1, 64, { message: 'name must be 1 to 64 characters' })
  name!: string;

  @ApiProperty({ minimum: 1, maximum: MAX_CODE_CREDITS, description: 'Credits added each period' })
  @IsInt({ message: 'credits must be a whole number of credits' })
  @Min(1, { message: 'credits must be at least 1' })
  @Max(MAX_CODE_CREDITS, { message: `credits must be at most ${MAX_CODE_CREDITS}` })
  credits!: number;

  @ApiProperty({ enum: PLAN_PERIODS, description: 'A UTC day or a UTC calendar month' })
  @IsIn(PLAN_PERIODS, { message: `period must be one of ${PLAN_PERIODS.join(', ')}` })
  period!: (typeof PLAN_PERIODS)[number];

  @ApiPropertyOptional({
    type: [String],
    default: [],
    description: 'Chat models its subscribers may use even when not open to everyone',
  })
  @Optional()
  @Transform(modelNames)
  @IsArray({ message: 'models must be a list of model names' })
  @ArrayMaxSize(MAX_PLAN_MODELS, { message: `models must name at most ${MAX_PLAN_MODELS} models` })
  @IsString({ each: true, message: 'models must be a list of model names' })
  models?: string[];
}

/** A plan's changes; its period is fixed, since its subscribers' top-ups are due by it. */
export class UpdatePlanDto {
  @ApiPropertyOptional()
  @Optional()
  @Transform(trimmed)
  @IsString({ message: 'name must be a string' })
  @Length(1, 64, { message: 'name must be 1 to 64 characters' })
  name?: string;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_CODE_CREDITS,
    description: 'From the next top-up',
  })
  @Optional()
  @IsInt({ message: 'credits must be a whole number of credits' })
  @Min(1, { message: 'credits must be at least 1' })
  @Max(MAX_CODE_CREDITS, { message: `credits must be at most ${MAX_CODE_CREDITS}` })
  credits?: number;

  @ApiPropertyOptional({ type: [String] })
  @Optional()
  @Transform(modelNames)
  @IsArray({ message: 'models must be a list of model names' })
  @ArrayMaxSize(MAX_PLAN_MODELS, { message: `models must name at most ${MAX_PLAN_MODELS} models` })
  @IsString({ each: true, message: 'models must be a list of model names' })
  models?: string[];

  @ApiPropertyOptional({ description: 'No new subscribers, no top-ups, no included models' })
  @Optional()
  @IsBoolean({ message: 'disabled must be true or false' })
  disabled?: boolean;
}

export class PlanResponse {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty() credits!: number;
  @ApiProperty({ enum: PLAN_PERIODS }) period!: (typeof PLAN_PERIODS)[number];
  @ApiProperty({ type: [String], description: 'Models its subscribers may use' })
  models!: string[];
  @ApiProperty() disabled!: boolean;
  @ApiProperty({ description: 'Users on the plan now' }) subscribers!: number;
  @ApiProperty() createdAt!: string;
}

export class PlanListResponse {
  @ApiProperty({ type: [PlanResponse] }) items!: PlanResponse[];
  @ApiProperty({ description: 'How many plans there are: all of them, unpaged' }) total!: number;
}

export class AssignPlanDto {
  @ApiProperty({ type: Number, nullable: true, description: 'The plan; null takes it away' })
  @ValidateIf((_dto, value) => value !== null)
  @IsInt({ message: 'planId must be a plan id or null' })
  @Min(1, { message: 'planId must be a plan id or null' })
  planId!: number | null;
}

export class SubscriptionResponse {
  @ApiProperty({ type: PlanResponse, nullable: true }) plan!: PlanResponse | null;
  @ApiProperty({ type: String, nullable: true, description: 'When the next top-up is due' })
  nextTopUpAt!: string | null;
  @ApiProperty() balance!: number;
}

export class InviteResponse {
  @ApiProperty({ description: 'The code of the invite link' }) code!: string;
  @ApiProperty({ example: '/register?invite=7K3MQ9XD2H', description: 'The link, on this site' })
  path!: string;
  @ApiProperty({ description: 'Credits the inviter and the invitee each receive' })
  reward!: number;
}

// The admin overview's credit figures (docs/credits.md, "Overview").

export class CreditDayResponse {
  @ApiProperty({ description: 'The UTC day, YYYY-MM-DD', example: '2026-11-25' }) day!: string;
  @ApiProperty({ description: 'Registration grants' }) grant!: number;
  @ApiProperty({ description: 'Redeemed codes' }) redeem!: number;
  @ApiProperty({ description: 'Invitation rewards' }) invite!: number;
  @ApiProperty({ description: 'Plan top-ups' }) plan!: number;
  @ApiProperty({ description: "Administrators' positive adjustments" }) adjust!: number;
  @ApiProperty({ description: 'Everything granted: the five above summed' }) granted!: number;
  @ApiProperty({ description: "Replies' freezes less their refunds, that day" }) spent!: number;
}

export class CreditModelSpendResponse {
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The model; null for entries made before the ledger recorded it',
  })
  model!: string | null;
  @ApiProperty({ description: 'Credits spent on it in the range, freezes less refunds' })
  spent!: number;
}

export class CreditOverviewResponse {
  @ApiProperty({
    type: [CreditDayResponse],
    description: 'Every day of the range, oldest first; a day without entries counts zero',
  })
  items!: CreditDayResponse[];
  @ApiProperty({ description: 'How many days there are: as many as asked' }) total!: number;
  @ApiProperty({
    type: [CreditModelSpendResponse],
    description: 'Credits spent per model in the range, most first',
  })
  models!: CreditModelSpendResponse[];
}

export class CreditSpendResponse {
  @ApiProperty({ description: 'How many UTC days, today included' }) days!: number;
  @ApiProperty({
    type: [CreditModelSpendResponse],
    description: "The user's credits spent per model in those days, most first",
  })
  models!: CreditModelSpendResponse[];
}
