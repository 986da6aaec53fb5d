import { INT4_MAX } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';
import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { ChannelKind, ChannelProvider, ChannelStatus } from '@switchyard/db';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { PageQuery } from '../common/pagination.js';
import {
  GROUP_PATTERN,
  IsBaseUrl,
  IsModelMapping,
  IsModelName,
  IsModelPattern,
  NullableOptional,
} from '../common/validators.js';

const KINDS = Object.values(ChannelKind);
const STATUSES = Object.values(ChannelStatus);
const PROVIDERS = Object.values(ChannelProvider);
export const MAX_KEYS_PER_CHANNEL = 5000;
/**
 * Long enough for a Bedrock key with an STS session token, whose size AWS does not fix (about
 * 1,000 characters is common, and session policies and tags make it longer).
 */
export const MAX_KEY_LENGTH = 4096;
const KEY_PATTERN = new RegExp(`^\\S{8,${MAX_KEY_LENGTH}}$`);
export const MAX_IMPORT_CHANNELS = 1000;

export class LimitsDto {
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    description: 'Requests per minute; null = no limit',
  })
  @NullableOptional()
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  rpm?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    description: 'Tokens per minute; null = no limit',
  })
  @NullableOptional()
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  tpm?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    description: 'Requests in flight; null = no limit',
  })
  @NullableOptional()
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  concurrency?: number | null;
}

/** What a provider needs besides its base URL and keys (docs/providers.md). */
export class ProviderSettingsDto {
  @ApiPropertyOptional({
    example: '2023-06-01',
    description: 'anthropic: the `anthropic-version` header sent upstream',
  })
  @IsOptional()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'anthropicVersion must be a date like 2023-06-01' })
  anthropicVersion?: string;

  @ApiPropertyOptional({
    example: '2024-10-21',
    description: 'azure: the `api-version` query parameter; deployments come from modelMapping',
  })
  @IsOptional()
  @Matches(/^\d{4}-\d{2}-\d{2}(-preview)?$/, {
    message: 'apiVersion must be a date like 2024-10-21, optionally with -preview',
  })
  apiVersion?: string;

  @ApiPropertyOptional({ example: 'us-east-1', description: 'bedrock: the AWS region' })
  @IsOptional()
  @Matches(/^[a-z]{2}(-[a-z]+)+-\d$/, { message: 'region must be an AWS region like us-east-1' })
  region?: string;
}

export class CreateChannelDto {
  @ApiProperty({ example: 'Relay A', maxLength: 128 })
  @IsString()
  @Length(1, 128)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @ApiProperty({
    enum: ChannelKind,
    enumName: 'ChannelKind',
    description: 'One provider account, or a relay pooling many',
  })
  @IsIn(KINDS, { message: `kind must be one of ${KINDS.join(', ')}` })
  kind!: ChannelKind;

  @ApiPropertyOptional({
    enum: ChannelProvider,
    enumName: 'ChannelProvider',
    default: ChannelProvider.openai,
    description:
      'The wire format spoken upstream; `openai` is any OpenAI-compatible service. A bedrock key is `ACCESS_KEY_ID:SECRET_ACCESS_KEY` or `ACCESS_KEY_ID:SECRET_ACCESS_KEY:SESSION_TOKEN`, and a bedrock channel needs `providerSettings.region`',
  })
  @IsOptional()
  @IsIn(PROVIDERS, { message: `provider must be one of ${PROVIDERS.join(', ')}` })
  provider?: ChannelProvider;

  @ApiPropertyOptional({ type: ProviderSettingsDto })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ProviderSettingsDto)
  providerSettings?: ProviderSettingsDto;

  @ApiProperty({
    example: 'https://relay.example.com',
    description:
      'Requests go to `<baseUrl>/v1/chat/completions`; a trailing `/v1` or full endpoint is cut off',
  })
  @IsBaseUrl()
  baseUrl!: string;

  @ApiProperty({
    type: [String],
    writeOnly: true,
    description:
      'Upstream keys, one per account. Sealed at rest; never returned (only their last four characters)',
  })
  @IsArray()
  @ArrayMinSize(1, { message: 'keys must hold at least one key' })
  @ArrayMaxSize(MAX_KEYS_PER_CHANNEL)
  @ArrayUnique(undefined, { message: 'keys must not repeat a key' })
  @IsString({ each: true })
  @Matches(KEY_PATTERN, {
    each: true,
    message: `each key must be 8 to ${MAX_KEY_LENGTH} characters without spaces`,
  })
  keys!: string[];

  @ApiProperty({
    type: [String],
    example: ['gpt-4o', 'gpt-4o-mini', 'gpt-4-gizmo-*'],
    description: 'Models served: exact names, `prefix*` or `*suffix` (a lone `*` is refused)',
  })
  @IsArray()
  @ArrayMinSize(1, { message: 'models must list at least one model' })
  @ArrayMaxSize(1000)
  @ArrayUnique(undefined, { message: 'models must not repeat a model' })
  @IsModelPattern({ each: true })
  models!: string[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'gpt-4o': 'gpt-4o-2024-08-06' },
    description: 'Requested model → model sent upstream',
  })
  @IsOptional()
  @IsModelMapping()
  modelMapping?: Record<string, string>;

  @ApiPropertyOptional({ default: 0, description: 'Higher is tried first' })
  @IsOptional()
  @IsInt()
  @Min(-1_000_000)
  @Max(1_000_000)
  priority?: number;

  @ApiPropertyOptional({
    default: 1,
    minimum: 0,
    description: 'Share of traffic within its priority tier',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  weight?: number;

  @ApiPropertyOptional({
    type: [String],
    default: ['default'],
    description: 'Token groups this channel serves',
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @ArrayUnique()
  @Matches(GROUP_PATTERN, {
    each: true,
    message: 'each group must be 1 to 64 letters, digits, _ . or -',
  })
  groups?: string[];

  @ApiPropertyOptional({ type: LimitsDto, description: 'Defaults for every key of the channel' })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => LimitsDto)
  limits?: LimitsDto;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 100,
    maximum: 600_000,
    description:
      "Milliseconds the gateway waits for this channel's response headers before it tries the next channel; null: the gateway's default (UPSTREAM_FIRST_BYTE_TIMEOUT_MS)",
  })
  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(600_000)
  firstByteTimeoutMs?: number | null;
}

export class UpdateChannelDto extends PartialType(CreateChannelDto, { skipNullProperties: false }) {
  @ApiProperty({ description: 'The version read; a stale one gets 409 `version_conflict`' })
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  version!: number;
}

export class UpdateChannelKeyDto {
  @ApiPropertyOptional({ enum: [ChannelStatus.enabled, ChannelStatus.disabled] })
  @IsOptional()
  @IsIn([ChannelStatus.enabled, ChannelStatus.disabled], {
    message: 'status must be enabled or disabled',
  })
  status?: 'enabled' | 'disabled';

  @ApiPropertyOptional({
    type: LimitsDto,
    description: "This key's own limits; null = the channel's",
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => LimitsDto)
  limits?: LimitsDto;

  @ApiPropertyOptional({
    description: "The channel's version read; when given, a stale one gets 409",
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  version?: number;
}

export class DisableChannelDto {
  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  reason?: string;
}

export class ListChannelsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: ChannelStatus, enumName: 'ChannelStatus' })
  @IsOptional()
  @IsIn(STATUSES, { message: `status must be one of ${STATUSES.join(', ')}` })
  status?: ChannelStatus;

  @ApiPropertyOptional({
    description: 'Channels serving this model, exactly or through a `prefix*` or `*suffix` entry',
  })
  @IsOptional()
  @IsModelName()
  model?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @Matches(GROUP_PATTERN, { message: 'group must be 1 to 64 letters, digits, _ . or -' })
  group?: string;

  @ApiPropertyOptional({ enum: ChannelKind, enumName: 'ChannelKind' })
  @IsOptional()
  @IsIn(KINDS, { message: `kind must be one of ${KINDS.join(', ')}` })
  kind?: ChannelKind;

  @ApiPropertyOptional({ description: 'Part of the name, any case' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  name?: string;
}

export class TestChannelDto {
  @ApiPropertyOptional({ description: "Default: the channel's first exact model" })
  @IsOptional()
  @IsModelName()
  model?: string;

  @ApiPropertyOptional({ description: 'Default: the first enabled key' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  keyId?: number;
}

export class LimitsResponse {
  @ApiProperty({ type: Number, nullable: true }) rpm!: number | null;
  @ApiProperty({ type: Number, nullable: true }) tpm!: number | null;
  @ApiProperty({ type: Number, nullable: true }) concurrency!: number | null;
}

export class ChannelKeyResponse {
  @ApiProperty() id!: number;
  @ApiProperty({ example: 'x9Qz', description: 'The only part of the key ever shown' })
  lastFour!: string;
  @ApiProperty({ enum: ChannelStatus, enumName: 'ChannelStatus' }) status!: ChannelStatus;
  @ApiProperty({ type: String, nullable: true }) statusReason!: string | null;
  @ApiProperty({ type: LimitsResponse, description: "null fields: the channel's limit applies" })
  limits!: LimitsResponse;
  @ApiProperty({ description: 'Micro-dollars' }) usedQuota!: number;
  @ApiProperty() requestCount!: number;
  @ApiProperty() createdAt!: Date;
}

export class ChannelResponse {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ChannelKind, enumName: 'ChannelKind' }) kind!: ChannelKind;
  @ApiProperty({ enum: ChannelProvider, enumName: 'ChannelProvider' }) provider!: ChannelProvider;
  @ApiProperty({ type: ProviderSettingsDto }) providerSettings!: ProviderSettingsDto;
  @ApiProperty() baseUrl!: string;
  @ApiProperty({ type: [ChannelKeyResponse] }) keys!: ChannelKeyResponse[];
  @ApiProperty({ type: [String] }) models!: string[];
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  modelMapping!: Record<string, string>;
  @ApiProperty() priority!: number;
  @ApiProperty() weight!: number;
  @ApiProperty({ type: [String] }) groups!: string[];
  @ApiProperty({ type: LimitsResponse }) limits!: LimitsResponse;
  @ApiProperty({ type: Number, nullable: true }) firstByteTimeoutMs!: number | null;
  @ApiProperty({
    enum: ChannelStatus,
    enumName: 'ChannelStatus',
    description:
      '`disabled` by an administrator; `auto_disabled` by the router (re-enabled by its probe)',
  })
  status!: ChannelStatus;
  @ApiProperty({ type: String, nullable: true }) statusReason!: string | null;
  @ApiProperty({ type: Date, nullable: true }) statusChangedAt!: Date | null;
  @ApiProperty({ description: 'Micro-dollars' }) usedQuota!: number;
  @ApiProperty() requestCount!: number;
  @ApiProperty({ description: 'Send it back with PATCH' }) version!: number;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export class ChannelPage extends PageOf(ChannelResponse) {}

export class ChannelTestError {
  @ApiProperty({
    example: 'account_deactivated',
    description:
      "The upstream's code, or timeout / connect_error / invalid_response / http_<status>",
  })
  code!: string;
  @ApiProperty() message!: string;
}

export class ChannelTestResult {
  @ApiProperty() ok!: boolean;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Upstream HTTP status; null when none came',
  })
  status!: number | null;
  @ApiProperty() latencyMs!: number;
  @ApiProperty({ description: 'The model asked for' }) model!: string;
  @ApiProperty({ description: 'The model sent upstream, after the mapping' })
  upstreamModel!: string;
  @ApiProperty() keyId!: number;
  @ApiPropertyOptional({ description: "The upstream's reply (when ok)" }) reply?: string;
  @ApiPropertyOptional({ description: 'The model the upstream says answered (when ok)' })
  answeredModel?: string;
  @ApiPropertyOptional({ type: ChannelTestError, description: 'What went wrong (when not ok)' })
  error?: ChannelTestError;
}

export class UpstreamModelsDto {
  @ApiProperty({ example: 'https://relay.example.com' })
  @IsBaseUrl()
  baseUrl!: string;

  @ApiPropertyOptional({
    enum: ChannelProvider,
    enumName: 'ChannelProvider',
    default: ChannelProvider.openai,
    description: "The provider whose model list to ask for, in that provider's way",
  })
  @IsOptional()
  @IsIn(PROVIDERS, { message: `provider must be one of ${PROVIDERS.join(', ')}` })
  provider?: ChannelProvider;

  @ApiPropertyOptional({ type: ProviderSettingsDto })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ProviderSettingsDto)
  providerSettings?: ProviderSettingsDto;

  @ApiProperty({ writeOnly: true, description: 'Used for this one request; never stored' })
  @Matches(KEY_PATTERN, { message: `key must be 8 to ${MAX_KEY_LENGTH} characters without spaces` })
  key!: string;
}

export class UpstreamModelsResult {
  @ApiProperty() ok!: boolean;
  @ApiProperty({ type: Number, nullable: true }) status!: number | null;
  @ApiProperty() latencyMs!: number;
  @ApiProperty({ type: [String], description: "The ids of the upstream's `/v1/models`, sorted" })
  models!: string[];
  @ApiPropertyOptional({ type: ChannelTestError, description: 'What went wrong (when not ok)' })
  error?: ChannelTestError;
}
