import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { UserProfileResponse } from '../auth/auth.dto.js';
import { Optional } from '@switchyard/service';

export class ListUsersQuery {
  @ApiPropertyOptional({ description: 'Part of a username or email, case-insensitive' })
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @MaxLength(254)
  search?: string;

  @ApiPropertyOptional({ default: 1, minimum: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  page?: number;

  @ApiPropertyOptional({ default: 20, minimum: 1, maximum: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  pageSize?: number;
}

export class UpdateUserDto {
  @ApiPropertyOptional({
    type: [String],
    description: 'Models the user may use besides the open ones (seed §2.3); replaces the list',
  })
  @Optional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  @Length(1, 128, { each: true })
  modelPermissions?: string[];

  @ApiPropertyOptional({ description: 'A disabled user cannot sign in; their sessions end' })
  @Optional()
  @IsBoolean()
  disabled?: boolean;
}

export class UsageResponse {
  @ApiProperty({ description: 'Replies received from the upstream' }) requests!: number;
  @ApiProperty() promptTokens!: number;
  @ApiProperty() completionTokens!: number;
  @ApiProperty() totalTokens!: number;
}

export class AdminUserResponse extends UserProfileResponse {
  @ApiProperty() disabled!: boolean;
  @ApiProperty({ type: UsageResponse }) usage!: UsageResponse;
}

export class UserPageResponse {
  @ApiProperty({ type: [AdminUserResponse] }) items!: AdminUserResponse[];
  @ApiProperty() total!: number;
}
