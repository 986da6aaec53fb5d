import { ApiProperty } from '@nestjs/swagger';
import { AdminRole } from '@switchyard/db';
import { IsString, Length } from 'class-validator';

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 256;

export class LoginDto {
  @ApiProperty({ example: 'admin' })
  @IsString()
  @Length(1, 64)
  username!: string;

  @ApiProperty({ format: 'password' })
  @IsString()
  @Length(1, 1024)
  password!: string;
}

export class ChangePasswordDto {
  @ApiProperty({ format: 'password' })
  @IsString()
  @Length(1, 1024)
  currentPassword!: string;

  @ApiProperty({
    format: 'password',
    minLength: MIN_PASSWORD_LENGTH,
    maxLength: MAX_PASSWORD_LENGTH,
    description: 'Differs from the current password and the username',
  })
  @IsString()
  @Length(MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH, {
    message: `newPassword must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`,
  })
  newPassword!: string;
}

export class AdminProfile {
  @ApiProperty() id!: number;
  @ApiProperty() username!: string;
  @ApiProperty({ enum: AdminRole, enumName: 'AdminRole' }) role!: AdminRole;
  @ApiProperty() mustChangePassword!: boolean;
}

export class LoginResponse {
  @ApiProperty({ description: 'Send as `Authorization: Bearer <token>`', example: 'sess-…' })
  token!: string;
  @ApiProperty({ description: 'When true, only POST /api/auth/password and logout work' })
  mustChangePassword!: boolean;
  @ApiProperty() expiresAt!: Date;
  @ApiProperty({ type: AdminProfile }) admin!: AdminProfile;
}

export class PasswordChangedResponse {
  @ApiProperty({ description: 'Other sessions of this administrator that were ended' })
  revokedSessions!: number;
}

export class SessionsEndedResponse {
  @ApiProperty({ description: 'Sessions of this administrator that were ended, this one too' })
  revokedSessions!: number;
}
