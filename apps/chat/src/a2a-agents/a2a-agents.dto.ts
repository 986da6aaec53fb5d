import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsObject, IsOptional, IsString, IsUrl, Matches } from 'class-validator';
import { Optional } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';

const trim = Transform(({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim() : value,
);
/** The name becomes the tool `delegate_to_<name>`: at most 64 characters in all. */
const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;
const NAME_MESSAGE =
  'name must be 1 to 48 letters, digits, _ or -, starting with a letter or digit';
const URL_OPTIONS = { require_tld: false, require_protocol: true, protocols: ['http', 'https'] };
const URL_MESSAGE = "cardUrl must be the http(s) URL of the agent's card";

export class CreateA2aAgentDto {
  @ApiProperty({ example: 'research' })
  @trim
  @IsString()
  @Matches(AGENT_NAME, { message: NAME_MESSAGE })
  name!: string;

  @ApiProperty({ example: 'https://agents.example.com/.well-known/agent-card.json' })
  @IsUrl(URL_OPTIONS, { message: URL_MESSAGE })
  cardUrl!: string;

  @ApiPropertyOptional({
    description: 'Request headers such as its A2A key; stored encrypted, returned by name only',
    example: { authorization: 'Bearer a2a-…' },
  })
  @IsOptional()
  @IsObject()
  headers?: Record<string, string>;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export class UpdateA2aAgentDto {
  @ApiPropertyOptional()
  @Optional()
  @trim
  @IsString()
  @Matches(AGENT_NAME, { message: NAME_MESSAGE })
  name?: string;

  @ApiPropertyOptional()
  @Optional()
  @IsUrl(URL_OPTIONS, { message: URL_MESSAGE })
  cardUrl?: string;

  @ApiPropertyOptional({ description: 'Replaces every header; {} removes them' })
  @Optional()
  @IsObject()
  headers?: Record<string, string>;

  @ApiPropertyOptional()
  @Optional()
  @IsBoolean()
  enabled?: boolean;
}

export class A2aAgentStatus {
  @ApiProperty() reachable!: boolean;
  @ApiProperty({ type: String, nullable: true }) lastError!: string | null;
  @ApiProperty() checkedAt!: string;
}

export class A2aSkillResponse {
  @ApiProperty() id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() description!: string;
}

/** What the agent's card says, as read now; null when it could not be read. */
export class A2aCardSummary {
  @ApiProperty() name!: string;
  @ApiProperty() description!: string;
  @ApiProperty() version!: string;
  @ApiProperty({ type: [A2aSkillResponse] }) skills!: A2aSkillResponse[];
}

export class A2aAgentResponse {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ description: 'The tool name models call' }) tool!: string;
  @ApiProperty() cardUrl!: string;
  @ApiProperty({ type: [String], description: 'Names of the stored headers' })
  headerNames!: string[];
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ type: A2aAgentStatus }) status!: A2aAgentStatus;
  @ApiProperty({ type: A2aCardSummary, nullable: true }) card!: A2aCardSummary | null;
  @ApiProperty() createdAt!: string;
  @ApiProperty() updatedAt!: string;
}

export class A2aAgentPageResponse extends PageOf(A2aAgentResponse) {}
