import { INT4_MAX } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';
import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  isISO8601,
} from 'class-validator';
import { PageQuery } from '../common/pagination.js';
import {
  GROUP_PATTERN,
  IsIpOrCidr,
  IsModelPattern,
  NullOr,
  NullableOptional,
} from '../common/validators.js';

export const TOKEN_STATUSES = ['enabled', 'disabled', 'exhausted', 'expired'] as const;
export type TokenStatusView = (typeof TOKEN_STATUSES)[number];

/**
 * The bundle of three tokens (docs/specification.md, "Tokens"), by purpose, and the suffix
 * each one's name gets.
 */
export const BUNDLE_PURPOSES = {
  chat: '-chat',
  imageModel: '-image-model',
  imageService: '-image-service',
} as const;
const LONGEST_SUFFIX = Math.max(...Object.values(BUNDLE_PURPOSES).map((s) => s.length));

export class CreateTokenDto {
  @ApiProperty({ example: 'team-a', maxLength: 128 })
  @IsString()
  @Length(1, 128)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the token stops working; null = never expires. Must be in the future.',
  })
  @NullOr(
    (value) => typeof value === 'string' && isISO8601(value, { strict: true }),
    'an ISO 8601 date and time, or null for never',
  )
  expiresAt!: string | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    minimum: 0,
    description: 'Spending limit in micro-dollars (1 USD = 1,000,000); null = unlimited',
  })
  @NullOr(
    (value) => Number.isSafeInteger(value) && (value as number) >= 0,
    'a whole number of micro-dollars (0 or more), or null for unlimited',
  )
  quota!: number | null;

  @ApiPropertyOptional({
    type: [String],
    description:
      'Models it may call (exact, `prefix*` or `*suffix`; see docs/architecture.md, "Model patterns"); empty = every model',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ArrayUnique()
  @IsModelPattern({ each: true })
  models?: string[];

  @ApiPropertyOptional({
    type: [String],
    example: ['203.0.113.7', '10.0.0.0/8'],
    description: 'Client addresses or CIDR blocks it may be used from; empty = anywhere',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(256)
  @ArrayUnique()
  @IsIpOrCidr({ each: true })
  allowIps?: string[];

  @ApiPropertyOptional({ default: 'default', description: 'The channel group it is routed to' })
  @IsOptional()
  @Matches(GROUP_PATTERN, { message: 'group must be 1 to 64 letters, digits, _ . or -' })
  group?: string;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    description: 'Requests per minute; null = no limit',
  })
  @NullableOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  rateLimit?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    description:
      // A template literal: the cited heading's apostrophe stays unescaped for docs checks.
      `The team that pays for it (docs/teams.md, "Administrators' tokens"); null = the operator's`,
  })
  @NullableOptional()
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  teamId?: number | null;
}

export class UpdateTokenDto extends PartialType(CreateTokenDto, { skipNullProperties: false }) {
  @ApiPropertyOptional({ description: 'false disables the token; true enables it again' })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @ApiProperty({ description: 'The version read; a stale one gets 409 `version_conflict`' })
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  version!: number;
}

export class CreateTokenBundleDto extends CreateTokenDto {}
// Room for the longest suffix within the 128 characters of a token name.
MaxLength(128 - LONGEST_SUFFIX)(CreateTokenBundleDto.prototype, 'name');
ApiProperty({
  example: 'team-a',
  maxLength: 128 - LONGEST_SUFFIX,
  description: 'The tokens are named `<name>-chat`, `<name>-image-model`, `<name>-image-service`',
})(CreateTokenBundleDto.prototype, 'name');

export class ListTokensQuery extends PageQuery {
  @ApiPropertyOptional({ enum: TOKEN_STATUSES })
  @IsOptional()
  @IsIn(TOKEN_STATUSES, { message: `status must be one of ${TOKEN_STATUSES.join(', ')}` })
  status?: TokenStatusView;

  @ApiPropertyOptional()
  @IsOptional()
  @Matches(GROUP_PATTERN, { message: 'group must be 1 to 64 letters, digits, _ . or -' })
  group?: string;

  @ApiPropertyOptional({ description: 'Part of the name, any case' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  name?: string;
}

export class TokenResponse {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ example: 'Ab3x', description: 'The only part of the token shown after creation' })
  lastFour!: string;
  @ApiProperty({
    enum: TOKEN_STATUSES,
    description:
      '`expired` when enabled but past `expiresAt`; `exhausted` when the quota is used up',
  })
  status!: TokenStatusView;
  @ApiProperty({ type: Date, nullable: true }) expiresAt!: Date | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Micro-dollars; null = unlimited' })
  quota!: number | null;
  @ApiProperty({ description: 'Micro-dollars' }) usedQuota!: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Micro-dollars; null = unlimited' })
  remainingQuota!: number | null;
  @ApiProperty({ type: [String] }) models!: string[];
  @ApiProperty({ type: [String] }) allowIps!: string[];
  @ApiProperty() group!: string;
  @ApiProperty({ type: Number, nullable: true }) rateLimit!: number | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: "The team that pays; null = the operator's",
  })
  teamId!: number | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'The member who made it; null = an administrator',
  })
  ownerId!: number | null;
  @ApiProperty({ description: 'Send it back with PATCH' }) version!: number;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export class CreatedTokenResponse extends TokenResponse {
  @ApiProperty({
    example: 'sk-…',
    description: 'The full token: shown this once, stored only as its SHA-256',
  })
  key!: string;
}

export class TokenBundleResponse {
  @ApiProperty({ type: CreatedTokenResponse }) chat!: CreatedTokenResponse;
  @ApiProperty({ type: CreatedTokenResponse, description: 'For drawing with the image model' })
  imageModel!: CreatedTokenResponse;
  @ApiProperty({
    type: CreatedTokenResponse,
    description: 'For drawing with the image-generation service',
  })
  imageService!: CreatedTokenResponse;
}

export class TokenPage extends PageOf(TokenResponse) {}
