import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';
import { MODEL_NAME } from '../common/platform.js';

export class UpdatePreferencesDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'gpt-4o-mini',
    description: 'The model to preselect; null forgets the choice',
  })
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsString()
  @Matches(MODEL_NAME, { message: 'model must be a model name of up to 128 characters' })
  model?: string | null;
}

export class AddCustomAssistantDto {
  @ApiProperty({ example: 'https://chatgpt.com/g/g-abc123XYZ-travel-guide' })
  @IsString()
  @MaxLength(2048)
  link!: string;
}

export class PreferencesResponse {
  @ApiProperty({ type: String, nullable: true, example: 'gpt-4o-mini' })
  model!: string | null;

  @ApiProperty({ type: [String], example: ['gpt-4-gizmo-g-abc123XYZ-travel-guide'] })
  customAssistants!: string[];
}
