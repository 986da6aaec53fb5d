import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';

const USERNAME = /^[a-z0-9_.-]{3,64}$/;

/** Usernames are case-insensitive: "Alice" and "alice" are one account. */
const lowercase = Transform(({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim().toLowerCase() : value,
);

export class RegisterDto {
  @ApiProperty({ example: 'alice', description: '3 to 64 letters, digits, _ . or -' })
  @lowercase
  @IsString()
  @Matches(USERNAME, { message: 'username must be 3 to 64 letters, digits, _ . or -' })
  username!: string;

  @ApiProperty({ minLength: 8, maxLength: 256 })
  @IsString()
  @Length(8, 256, { message: 'password must have 8 to 256 characters' })
  password!: string;

  @ApiPropertyOptional({ example: 'alice@example.com' })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim().toLowerCase() : value,
  )
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(254)
  email?: string;

  @ApiPropertyOptional({ description: "The code of another user's invite link (docs/credits.md)" })
  @IsOptional()
  @IsString({ message: 'invite must be a string' })
  @Length(1, 32, { message: 'invite must be 1 to 32 characters' })
  invite?: string;
}

export class LoginDto {
  @ApiProperty({ example: 'alice' })
  @lowercase
  @IsString()
  @Length(1, 64)
  username!: string;

  @ApiProperty()
  @IsString()
  @Length(1, 256)
  password!: string;
}

export class SessionResponse {
  @ApiProperty({ description: 'Send as `Authorization: Bearer <token>`' })
  token!: string;

  @ApiProperty()
  expiresAt!: string;
}

export class UserProfileResponse {
  @ApiProperty() id!: number;
  @ApiProperty() username!: string;
  @ApiProperty({ type: String, nullable: true }) email!: string | null;
  @ApiProperty({ enum: ['user', 'admin'] }) role!: 'user' | 'admin';
  @ApiProperty({ type: [String] }) modelPermissions!: string[];
  @ApiProperty() createdAt!: string;
}
