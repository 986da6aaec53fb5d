import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import {
  PLATFORM_MESSAGE,
  PLATFORMS,
  PURPOSES,
  type PlatformName,
  type PurposeName,
} from '../common/platform.js';
import { Optional } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';

const trim = Transform(({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim() : value,
);
const KEY = /^\S+$/;
const KEY_MESSAGE = 'key must be the upstream token: 1 to 512 characters without spaces';
const PURPOSE_MESSAGE = `purpose must be one of ${PURPOSES.join(', ')}`;

export class CreateApiKeyDto {
  @ApiPropertyOptional({ enum: PLATFORMS, default: 'openai' })
  @Optional()
  @IsIn(PLATFORMS, { message: PLATFORM_MESSAGE })
  platform?: PlatformName;

  @ApiProperty({
    example: 'https://relay.example.com',
    description: 'Base URL; a pre-v4.1.1 `…/v1/chat/completions` address is cut to its base',
  })
  @IsString()
  @MaxLength(2048)
  address!: string;

  @ApiProperty({
    description: 'The upstream token; stored encrypted, shown only by its last four characters',
  })
  @trim
  @IsString()
  @Length(1, 512, { message: KEY_MESSAGE })
  @Matches(KEY, { message: KEY_MESSAGE })
  key!: string;

  @ApiPropertyOptional({ enum: PURPOSES, default: 'chat' })
  @Optional()
  @IsIn(PURPOSES, { message: PURPOSE_MESSAGE })
  purpose?: PurposeName;

  @ApiPropertyOptional({
    default: true,
    description:
      'Disabled records take no part in the round-robin (docs/specification.md, "Chat upstream records")',
  })
  @Optional()
  @IsBoolean()
  enabled?: boolean;
}

export class UpdateApiKeyDto extends PartialType(CreateApiKeyDto, { skipNullProperties: false }) {}

export class ListApiKeysQuery {
  @ApiPropertyOptional({ enum: PURPOSES })
  @IsOptional()
  @IsIn(PURPOSES, { message: PURPOSE_MESSAGE })
  purpose?: PurposeName;
}

export class ApiKeyResponse {
  @ApiProperty() id!: number;
  @ApiProperty({ enum: PLATFORMS }) platform!: PlatformName;
  @ApiProperty({ description: 'Base URL' }) address!: string;
  @ApiProperty({ description: 'A pre-v4.1.1 full endpoint address was given and cut to its base' })
  addressNormalized!: boolean;
  @ApiProperty({ example: 'x9Qz' }) keyLastFour!: string;
  @ApiProperty({ enum: PURPOSES }) purpose!: PurposeName;
  @ApiProperty() enabled!: boolean;
  @ApiProperty() createdAt!: string;
  @ApiProperty() updatedAt!: string;
}

export class ApiKeyPageResponse extends PageOf(ApiKeyResponse) {}
