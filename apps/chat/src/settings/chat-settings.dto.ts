import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsString, Length, Max, Min, ValidateIf } from 'class-validator';
import { Optional } from '@switchyard/service';

/** The most credits a registration grant (and any reward) may give. */
export const MAX_GRANT = 1_000_000;

const trimmed = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim() : value;

/** A change of the chat settings: only the fields sent change (docs/credits.md, "Settings"). */
export class UpdateChatSettingsDto {
  @ApiPropertyOptional({ description: 'Credits each newly registered user receives' })
  @Optional()
  @IsInt({ message: 'registrationGrant must be a whole number of credits' })
  @Min(0, { message: 'registrationGrant must be at least 0' })
  @Max(MAX_GRANT, { message: `registrationGrant must be at most ${MAX_GRANT}` })
  registrationGrant?: number;

  @ApiPropertyOptional({ description: 'Credits the inviter and the invitee each receive' })
  @Optional()
  @IsInt({ message: 'inviteReward must be a whole number of credits' })
  @Min(0, { message: 'inviteReward must be at least 0' })
  @Max(MAX_GRANT, { message: `inviteReward must be at most ${MAX_GRANT}` })
  inviteReward?: number;

  @ApiPropertyOptional({
    description: 'Invitees registered from one address that earn their inviter a reward',
  })
  @Optional()
  @IsInt({ message: 'invitesPerAddress must be a whole number' })
  @Min(0, { message: 'invitesPerAddress must be at least 0' })
  @Max(1000, { message: 'invitesPerAddress must be at most 1000' })
  invitesPerAddress?: number;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'The chat model that answers A2A tasks; null: none, every task is refused',
  })
  @Transform(trimmed)
  @ValidateIf((_dto, value) => value !== null && value !== undefined)
  @IsString({ message: 'a2aModel must be a model name or null' })
  @Length(1, 128, { message: 'a2aModel must be 1 to 128 characters, or null' })
  a2aModel?: string | null;
}

export class ChatSettingsResponse {
  @ApiProperty({ description: 'Credits each newly registered user receives' })
  registrationGrant!: number;

  @ApiProperty({ description: 'Credits the inviter and the invitee each receive' })
  inviteReward!: number;

  @ApiProperty({ description: 'Invitees from one address that earn their inviter a reward' })
  invitesPerAddress!: number;

  @ApiProperty({ type: String, nullable: true, description: 'The A2A decision model' })
  a2aModel!: string | null;
}
