import { INT4_MAX } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { PageQuery } from '../common/pagination.js';
import { IsoDateQuery } from '../common/validators.js';

export class AuditQuery extends PageQuery {
  @ApiPropertyOptional({ example: 'channel.update' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  action?: string;

  @ApiPropertyOptional({ example: 'channel' })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  targetType?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(64)
  targetId?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  actorId?: number;

  @ApiPropertyOptional({ format: 'date-time', description: 'Entries at or after this time' })
  @IsoDateQuery()
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Entries before this time' })
  @IsoDateQuery()
  to?: string;
}

export class AuditEntryResponse {
  @ApiProperty() id!: number;
  @ApiProperty({ nullable: true, type: Number, description: 'Null for the CLI and start-up' })
  actorId!: number | null;
  @ApiProperty() actorName!: string;
  @ApiProperty({ example: 'token.create' }) action!: string;
  @ApiProperty({ example: 'token' }) targetType!: string;
  @ApiProperty({ nullable: true, type: String }) targetId!: string | null;
  @ApiProperty({
    nullable: true,
    type: 'object',
    additionalProperties: true,
    description: 'What changed; never a secret',
  })
  details!: Record<string, unknown> | null;
  @ApiProperty({ nullable: true, type: String }) clientIp!: string | null;
  @ApiProperty() createdAt!: Date;
}

export class AuditPage extends PageOf(AuditEntryResponse) {}
