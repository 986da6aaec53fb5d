import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  Min,
} from 'class-validator';
import { IMAGE_LIMITS } from '@switchyard/contracts';
import { AttachmentResponse } from '../attachments/attachments.dto.js';
import { PageQuery } from '../common/page-query.js';
import { MODEL_NAME } from '../common/platform.js';
import { Optional } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';

const trim = Transform(({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim() : value,
);
const MODEL_MESSAGE = 'model must be a model name';

export class CreateConversationDto {
  @ApiPropertyOptional({ default: 'New conversation', maxLength: 200 })
  @Optional()
  @trim
  @IsString()
  @Length(1, 200)
  title?: string;

  @ApiProperty({ example: 'gpt-4o' })
  @IsString()
  @Matches(MODEL_NAME, { message: MODEL_MESSAGE })
  model!: string;

  @ApiPropertyOptional({ type: [Number], description: 'MCP servers enabled here' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(32)
  @IsInt({ each: true })
  @Min(1, { each: true })
  @Max(2 ** 31 - 1, { each: true })
  mcpServerIds?: number[];
}

export class UpdateConversationDto extends PartialType(CreateConversationDto, {
  skipNullProperties: false,
}) {}

export class DeleteMessagesQuery {
  @ApiProperty({
    description: 'The first message to delete; every later message goes with it',
    minimum: 1,
  })
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  from!: number;
}

const PAGE_STARTS = ['oldest', 'latest'] as const;

/**
 * A conversation's messages, a page at a time. Items are always oldest first; `start`
 * says which end page 1 is at, so a long conversation opens on its latest page, and
 * `before` keeps the pages behind what is already shown steady while new messages arrive.
 */
export class MessagePageQuery extends PageQuery {
  @ApiPropertyOptional({
    enum: PAGE_STARTS,
    default: 'oldest',
    description: 'Where page 1 is: the oldest messages, or the latest ones',
  })
  @Optional()
  @IsIn(PAGE_STARTS, { message: `start must be one of ${PAGE_STARTS.join(', ')}` })
  start?: (typeof PAGE_STARTS)[number];

  @ApiPropertyOptional({
    description: 'Only the messages before this one (`total` counts those)',
    minimum: 1,
  })
  @Optional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  before?: number;
}

export class SendMessageDto {
  @ApiProperty({ maxLength: 100_000 })
  @IsString()
  @Length(1, 100_000, { message: 'content must have 1 to 100000 characters' })
  content!: string;

  @ApiPropertyOptional({
    description: "Another model for this message; the conversation's otherwise",
  })
  @IsOptional()
  @IsString()
  @Matches(MODEL_NAME, { message: MODEL_MESSAGE })
  model?: string;

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    maxItems: IMAGE_LIMITS.imagesPerMessage,
    description:
      'Images uploaded with POST /api/attachments and not sent yet, in order; only for models that read images',
  })
  @IsOptional()
  @IsArray()
  // Generous here: the service answers too_many_images with the real limit.
  @ArrayMaxSize(64)
  @IsUUID('all', { each: true, message: 'each attachment id must be a UUID' })
  attachmentIds?: string[];
}

export class ConversationResponse {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() title!: string;
  @ApiProperty() model!: string;
  @ApiProperty({ type: [Number] }) mcpServerIds!: number[];
  @ApiProperty() createdAt!: string;
  @ApiProperty() updatedAt!: string;
}

export class ConversationPageResponse extends PageOf(ConversationResponse) {}

export class TokenUsage {
  @ApiProperty() promptTokens!: number;
  @ApiProperty() completionTokens!: number;
}

export class MessageResponse {
  @ApiProperty() id!: number;
  @ApiProperty({ enum: ['system', 'user', 'assistant'] }) role!: 'system' | 'user' | 'assistant';
  @ApiProperty() content!: string;
  @ApiProperty({ type: [String], description: 'Drawing results' }) imageUrls!: string[];
  @ApiProperty({ type: [AttachmentResponse], description: 'Images the user attached' })
  attachments!: AttachmentResponse[];
  @ApiProperty({ type: String, nullable: true }) model!: string | null;
  @ApiProperty({ enum: ['complete', 'partial', 'failed'] }) status!:
    'complete' | 'partial' | 'failed';
  @ApiProperty({ type: String, nullable: true, description: 'Why the reply is partial or failed' })
  errorCode!: string | null;
  @ApiProperty({
    type: [Object],
    description:
      'Tool calls that led to the reply: server, tool or uri, arguments, result or error, duration',
  })
  toolSteps!: object[];
  @ApiProperty({ type: TokenUsage }) usage!: TokenUsage;
  @ApiProperty() createdAt!: string;
}

export class MessagePageResponse extends PageOf(MessageResponse) {}
