import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsObject, IsString, IsUrl, Matches } from 'class-validator';
import { Optional } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';

const trim = Transform(({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim() : value,
);
/** Server names appear in prompts and tool names (`<server_name>`): no spaces or markup. */
export const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const NAME_MESSAGE =
  'name must be 1 to 64 letters, digits, _ or -, starting with a letter or digit';
const URL_OPTIONS = { require_tld: false, require_protocol: true, protocols: ['http', 'https'] };
const URL_MESSAGE = 'url must be an http(s) URL of a Streamable HTTP MCP endpoint';

export class CreateMcpServerDto {
  @ApiProperty({ example: 'weather' })
  @trim
  @IsString()
  @Matches(SERVER_NAME, { message: NAME_MESSAGE })
  name!: string;

  @ApiProperty({ example: 'https://mcp.example.com/mcp' })
  @IsUrl(URL_OPTIONS, { message: URL_MESSAGE })
  url!: string;

  @ApiPropertyOptional({
    description:
      'Request headers such as an API key; stored encrypted, returned by name only. A change replaces every header; {} removes them',
    example: { authorization: 'Bearer …' },
  })
  @Optional()
  @IsObject()
  headers?: Record<string, string>;

  @ApiPropertyOptional({ default: true })
  @Optional()
  @IsBoolean()
  enabled?: boolean;
}

export class UpdateMcpServerDto extends PartialType(CreateMcpServerDto, {
  skipNullProperties: false,
}) {}

export class McpToolResponse {
  @ApiProperty() name!: string;
  @ApiProperty({ type: String, nullable: true }) description!: string | null;
  @ApiProperty({ type: Object, description: 'JSON Schema of the arguments' })
  inputSchema!: Record<string, unknown>;
}

export class McpResourceResponse {
  @ApiProperty() uri!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ type: String, nullable: true }) description!: string | null;
  @ApiProperty({ type: String, nullable: true }) mimeType!: string | null;
}

export class McpServerStatus {
  @ApiProperty() reachable!: boolean;
  @ApiProperty({ type: String, nullable: true }) lastError!: string | null;
  @ApiProperty() checkedAt!: string;
}

export class McpServerResponse {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty() url!: string;
  @ApiProperty({ type: [String], description: 'Names of the stored headers' })
  headerNames!: string[];
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ type: McpServerStatus }) status!: McpServerStatus;
  @ApiProperty({ type: [McpToolResponse] }) tools!: McpToolResponse[];
  @ApiProperty({ type: [McpResourceResponse] }) resources!: McpResourceResponse[];
  @ApiProperty() createdAt!: string;
  @ApiProperty() updatedAt!: string;
}

/** What a user sees to pick servers for a conversation. */
export class AvailableMcpServerResponse {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
}

export class McpServerPageResponse extends PageOf(McpServerResponse) {}

export class AvailableMcpServerPageResponse extends PageOf(AvailableMcpServerResponse) {}
