import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { AdminRole } from '@switchyard/db';
import { IsBoolean, IsIn, IsString, Length, Matches } from 'class-validator';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../auth/auth.dto.js';
import { Optional } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';

const ROLES = Object.values(AdminRole);
const PASSWORD_RULE = `${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`;

export class CreateAdminDto {
  @ApiProperty({ example: 'alice', pattern: '^[A-Za-z0-9_.-]{3,64}$' })
  @IsString()
  @Matches(/^[A-Za-z0-9_.-]{3,64}$/, {
    message: 'username must be 3 to 64 letters, digits, _ . or -',
  })
  username!: string;

  @ApiProperty({
    format: 'password',
    description: 'Initial password; the administrator must change it at first login',
  })
  @IsString()
  @Length(MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH, {
    message: `password must be ${PASSWORD_RULE}`,
  })
  password!: string;

  @ApiProperty({ enum: AdminRole, enumName: 'AdminRole' })
  @IsIn(ROLES, { message: `role must be one of ${ROLES.join(', ')}` })
  role!: AdminRole;
}

export class UpdateAdminDto {
  @ApiPropertyOptional({ enum: AdminRole, enumName: 'AdminRole' })
  @Optional()
  @IsIn(ROLES, { message: `role must be one of ${ROLES.join(', ')}` })
  role?: AdminRole;

  @ApiPropertyOptional({ description: 'A disabled administrator cannot log in' })
  @Optional()
  @IsBoolean()
  disabled?: boolean;

  @ApiPropertyOptional({
    format: 'password',
    description: 'Resets the password; the administrator must change it at next login',
  })
  @Optional()
  @IsString()
  @Length(MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH, {
    message: `password must be ${PASSWORD_RULE}`,
  })
  password?: string;
}

export class AdminResponse {
  @ApiProperty() id!: number;
  @ApiProperty() username!: string;
  @ApiProperty({ enum: AdminRole, enumName: 'AdminRole' }) role!: AdminRole;
  @ApiProperty() mustChangePassword!: boolean;
  @ApiProperty() disabled!: boolean;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export class AdminPage extends PageOf(AdminResponse) {}
