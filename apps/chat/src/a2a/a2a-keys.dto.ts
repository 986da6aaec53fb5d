import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, Length } from 'class-validator';
import { PageOf } from '@switchyard/service/openapi';

const trim = Transform(({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim() : value,
);

export class CreateA2aKeyDto {
  @ApiProperty({
    example: 'research agent',
    description: 'What the key is for, 1 to 64 characters',
  })
  @trim
  @IsString()
  @Length(1, 64)
  name!: string;
}

export class A2aKeyResponse {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ description: 'The last four characters of the key' }) lastFour!: string;
  @ApiProperty({ type: String, nullable: true }) lastUsedAt!: string | null;
  @ApiProperty({ type: String, nullable: true }) revokedAt!: string | null;
  @ApiProperty() createdAt!: string;
}

export class CreatedA2aKeyResponse extends A2aKeyResponse {
  @ApiProperty({ description: 'The key itself: shown this once, never again' }) key!: string;
}

export class A2aKeyPageResponse extends PageOf(A2aKeyResponse) {}
