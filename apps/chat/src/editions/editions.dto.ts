import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

export class ActivateLicenseDto {
  @ApiProperty({ description: 'The license text as issued: two base64url parts joined by "."' })
  @IsString()
  @Length(1, 8192)
  license!: string;
}

export class LicenseSummary {
  @ApiProperty() licensee!: string;
  @ApiProperty() expiresAt!: string;
  @ApiProperty({ description: 'Signed, for this installation, and not expired' })
  active!: boolean;
}

export class EditionResponse {
  @ApiProperty({ enum: ['community', 'plus'] }) edition!: 'community' | 'plus';
  @ApiProperty({ description: 'Licenses are issued for this id' }) installationId!: string;
  @ApiProperty({ type: LicenseSummary, nullable: true }) license!: LicenseSummary | null;
  @ApiProperty({ type: [String] }) recommendedRelays!: string[];
}
