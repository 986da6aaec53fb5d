import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional } from 'class-validator';
import { PageOf } from '@switchyard/service/openapi';
import { PageQuery } from '../common/pagination.js';
import { IsModelName } from '../common/validators.js';

/** A list longer than this is a misconfiguration: each entry may cost a request a full failover. */
export const MAX_FALLBACKS = 8;

export class PutModelFallbackDto {
  @ApiProperty({
    type: [String],
    example: ['claude-sonnet-4', 'gemini-2.5-pro'],
    description:
      'Models tried in order when every channel of the model failed before the first byte or none can take the request; exact names a channel serves',
  })
  @IsArray()
  @ArrayMaxSize(MAX_FALLBACKS)
  @IsModelName({ each: true })
  fallbacks!: string[];

  @ApiPropertyOptional({
    type: [String],
    description:
      'Tried instead of `fallbacks` when an upstream answers that the request exceeds the model’s context window; empty or absent: none',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_FALLBACKS)
  @IsModelName({ each: true })
  contextWindow?: string[];

  @ApiPropertyOptional({
    type: [String],
    description:
      'Tried instead of `fallbacks` when an upstream refuses the request under its content policy; empty or absent: none',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_FALLBACKS)
  @IsModelName({ each: true })
  contentPolicy?: string[];
}

export class ModelFallbackResponse {
  @ApiProperty({ example: 'gpt-4o' }) model!: string;
  @ApiProperty({ type: [String] }) fallbacks!: string[];
  @ApiProperty({ type: [String] }) contextWindow!: string[];
  @ApiProperty({ type: [String] }) contentPolicy!: string[];
  @ApiProperty() updatedAt!: Date;
}

export class ModelFallbackPage extends PageOf(ModelFallbackResponse) {}

export class ListModelFallbacksQuery extends PageQuery {}
