import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import {
  MODEL_NAME,
  PLATFORM_MESSAGE,
  PLATFORMS,
  PURPOSES,
  type PlatformName,
  type PurposeName,
} from '../common/platform.js';
import { Optional } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';

export const TOOL_MODES = ['off', 'native', 'prompt'] as const;
export type ToolModeName = (typeof TOOL_MODES)[number];
/** Ten million: more than any model's context window, and within the column's type. */
const MAX_CONTEXT_TOKENS = 10_000_000;
const CONTEXT_TOKENS_ABOUT =
  "The model's context window in tokens; the web app warns as a conversation nears it. null: unknown, no warning";
const VISION_ABOUT =
  'The model reads images: users may attach images to their messages (docs/specification.md, "Images")';
const TOOL_MODE_MESSAGE = `toolMode must be one of ${TOOL_MODES.join(', ')}`;
const TOOL_MODE_ABOUT =
  'How the model reaches MCP tools: native (the tools parameter), prompt (definitions in the system prompt) or off';

/** A million credits for one call or one thousand tokens: above it a price is a typo. */
export const MAX_PRICE = 1_000_000;
const PRICE_ABOUT = 'Credits (docs/credits.md, "Prices"); 0 with the other two 0: free';

function priceRules(field: string): PropertyDecorator[] {
  return [
    Optional(),
    IsInt({ message: `${field} must be a whole number of credits` }),
    Min(0, { message: `${field} must be at least 0` }),
    Max(MAX_PRICE, { message: `${field} must be at most ${MAX_PRICE}` }),
  ];
}

function Price(field: string): PropertyDecorator {
  return (target, key) => {
    for (const rule of priceRules(field)) rule(target, key);
  };
}

const NAME_MESSAGE = 'name must be a model name of up to 128 letters, digits and . _ : / @ + -';

export class CreateModelDto {
  @ApiPropertyOptional({ enum: PLATFORMS, default: 'openai' })
  @Optional()
  @IsIn(PLATFORMS, { message: PLATFORM_MESSAGE })
  platform?: PlatformName;

  @ApiProperty({
    example: 'gpt-4o',
    description: 'Names ending in -all and custom assistants are fine',
  })
  @IsString()
  @Matches(MODEL_NAME, { message: NAME_MESSAGE })
  name!: string;

  @ApiPropertyOptional({ enum: PURPOSES, default: 'chat' })
  @Optional()
  @IsIn(PURPOSES, { message: `purpose must be one of ${PURPOSES.join(', ')}` })
  purpose?: PurposeName;

  @ApiPropertyOptional({ default: false, description: 'On: every user may use the model' })
  @Optional()
  @IsBoolean()
  open?: boolean;

  @ApiPropertyOptional({ enum: TOOL_MODES, default: 'off', description: TOOL_MODE_ABOUT })
  @Optional()
  @IsIn(TOOL_MODES, { message: TOOL_MODE_MESSAGE })
  toolMode?: ToolModeName;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    maximum: MAX_CONTEXT_TOKENS,
    example: 128000,
    description: CONTEXT_TOKENS_ABOUT,
  })
  @IsOptional()
  @IsInt({ message: 'contextTokens must be a whole number of tokens' })
  @Min(1, { message: 'contextTokens must be at least 1' })
  @Max(MAX_CONTEXT_TOKENS, { message: `contextTokens must be at most ${MAX_CONTEXT_TOKENS}` })
  contextTokens?: number | null;

  @ApiPropertyOptional({ default: false, description: VISION_ABOUT })
  @Optional()
  @IsBoolean()
  vision?: boolean;

  @ApiPropertyOptional({
    default: 0,
    minimum: 0,
    maximum: MAX_PRICE,
    description: `Per call. ${PRICE_ABOUT}`,
  })
  @Price('creditsPerCall')
  creditsPerCall?: number;

  @ApiPropertyOptional({
    default: 0,
    minimum: 0,
    maximum: MAX_PRICE,
    description: `Per thousand input tokens. ${PRICE_ABOUT}`,
  })
  @Price('creditsPer1kInput')
  creditsPer1kInput?: number;

  @ApiPropertyOptional({
    default: 0,
    minimum: 0,
    maximum: MAX_PRICE,
    description: `Per thousand output tokens. ${PRICE_ABOUT}`,
  })
  @Price('creditsPer1kOutput')
  creditsPer1kOutput?: number;
}

export class UpdateModelDto extends PartialType(CreateModelDto, { skipNullProperties: false }) {}

export class ModelResponse {
  @ApiProperty() id!: number;
  @ApiProperty({ enum: PLATFORMS }) platform!: PlatformName;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: PURPOSES }) purpose!: PurposeName;
  @ApiProperty() open!: boolean;
  @ApiProperty({ enum: TOOL_MODES }) toolMode!: ToolModeName;
  @ApiProperty({ type: Number, nullable: true, description: CONTEXT_TOKENS_ABOUT })
  contextTokens!: number | null;
  @ApiProperty({ description: VISION_ABOUT }) vision!: boolean;
  @ApiProperty({ description: PRICE_ABOUT }) creditsPerCall!: number;
  @ApiProperty({ description: PRICE_ABOUT }) creditsPer1kInput!: number;
  @ApiProperty({ description: PRICE_ABOUT }) creditsPer1kOutput!: number;
  @ApiProperty() createdAt!: string;
  @ApiProperty() updatedAt!: string;
}

/** A model as a user sees it in the chat model list. */
export class VisibleModelResponse {
  @ApiProperty() name!: string;
  @ApiProperty({ enum: PLATFORMS }) platform!: PlatformName;
  @ApiProperty({ enum: PURPOSES }) purpose!: PurposeName;
  @ApiProperty({ enum: TOOL_MODES }) toolMode!: ToolModeName;
  @ApiProperty({ type: Number, nullable: true, description: CONTEXT_TOKENS_ABOUT })
  contextTokens!: number | null;
  @ApiProperty({ description: VISION_ABOUT }) vision!: boolean;
  @ApiProperty({ description: PRICE_ABOUT }) creditsPerCall!: number;
  @ApiProperty({ description: PRICE_ABOUT }) creditsPer1kInput!: number;
  @ApiProperty({ description: PRICE_ABOUT }) creditsPer1kOutput!: number;
}

export class ModelPageResponse extends PageOf(ModelResponse) {}

export class VisibleModelPageResponse extends PageOf(VisibleModelResponse) {}

export class FromLinkDto {
  @ApiProperty({ example: 'https://chatgpt.com/g/g-abc123XYZ-travel-guide?model=gpt-4' })
  @IsString()
  @MaxLength(2048)
  link!: string;
}

export class FromLinkResponse {
  @ApiProperty({ example: 'gpt-4-gizmo-g-abc123XYZ-travel-guide' }) model!: string;
}
