import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsOptional,
  IsString,
  Length,
  MaxLength,
} from 'class-validator';
import { UserProfileResponse } from '../auth/auth.dto.js';
import { Optional } from '@switchyard/service';
import { PageOf, PageQueryOf } from '@switchyard/service/openapi';

export class ListUsersQuery extends PageQueryOf({ pageSize: 20, maxPageSize: 100 }) {
  @ApiPropertyOptional({ description: 'Part of a username or email, case-insensitive' })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @MaxLength(254)
  search?: string;
}

export class UpdateUserDto {
  @ApiPropertyOptional({
    type: [String],
    description: 'Models the user may use besides the open ones; replaces the list',
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

export class UserPlanResponse {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
}

export class AdminUserResponse extends UserProfileResponse {
  @ApiProperty() disabled!: boolean;
  @ApiProperty({ type: UsageResponse }) usage!: UsageResponse;
  @ApiProperty({ description: 'Credit balance (docs/credits.md)' }) credits!: number;
  @ApiProperty({
    type: UserPlanResponse,
    nullable: true,
    description: 'The credit plan the user is on (docs/credits.md, "Plans"); null: none',
  })
  plan!: UserPlanResponse | null;
}

export class UserPageResponse extends PageOf(AdminUserResponse) {}
