import { INT4_MAX } from '@switchyard/service';
import { PageOf } from '@switchyard/service/openapi';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, Max, Min } from 'class-validator';
import { PageQuery } from '../common/pagination.js';

export class RequestLogQuery extends PageQuery {
  @ApiPropertyOptional({ description: 'Only this token’s requests' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  tokenId?: number;

  @ApiPropertyOptional({ description: 'Only the requests of this team’s tokens' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  teamId?: number;
}

/** An entry as listed: what it is, without its bodies. */
export class RequestLogSummary {
  @ApiProperty() requestId!: string;
  @ApiProperty() tokenId!: number;
  @ApiProperty({ type: String, nullable: true, description: 'Null once the token is deleted' })
  tokenName!: string | null;
  @ApiProperty({ example: 'chat.completions' }) endpoint!: string;
  @ApiProperty() model!: string;
  @ApiProperty() status!: number;
  @ApiProperty({ type: String, nullable: true, description: 'W3C trace id, when traced' })
  traceId!: string | null;
  @ApiProperty({ description: 'Characters kept of the request body' }) requestChars!: number;
  @ApiProperty({ description: 'Characters kept of the response body' }) responseChars!: number;
  @ApiProperty() requestTruncated!: boolean;
  @ApiProperty() responseTruncated!: boolean;
  @ApiProperty() requestedAt!: Date;
}

export class RequestLogPage extends PageOf(RequestLogSummary) {}

/** What metering billed for the request, once its usage row is written. */
export class RequestLogUsage {
  @ApiProperty({ type: Number, nullable: true }) channelId!: number | null;
  @ApiProperty({ type: String, nullable: true }) upstreamModel!: string | null;
  @ApiProperty() promptTokens!: number;
  @ApiProperty() completionTokens!: number;
  @ApiProperty({ description: 'Micro-dollars' }) cost!: number;
  @ApiProperty() latencyMs!: number;
  @ApiProperty({ type: Number, nullable: true }) firstByteMs!: number | null;
  @ApiProperty() attempts!: number;
  @ApiProperty({ type: String, nullable: true }) errorCode!: string | null;
}

export class RequestLogDetail extends RequestLogSummary {
  @ApiProperty({ description: 'As the client sent it, redacted of secrets and cut to the cap' })
  requestBody!: string;
  @ApiProperty({
    description: 'As the client was answered (a stream as its events), redacted and cut',
  })
  responseBody!: string;
  @ApiProperty({
    type: RequestLogUsage,
    nullable: true,
    description: 'Null until metering has billed it',
  })
  usage!: RequestLogUsage | null;
}

export class LoggedSubject {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
}

/** Who has the request log on. */
export class RequestLogSettings {
  @ApiProperty({ type: [LoggedSubject] }) tokens!: LoggedSubject[];
  @ApiProperty({ type: [LoggedSubject], description: 'Every token of these teams is logged' })
  teams!: LoggedSubject[];
}

export class SetRequestLogDto {
  @ApiProperty({ description: 'Keep the bodies of its requests from now on, or stop' })
  @IsBoolean()
  enabled!: boolean;
}
