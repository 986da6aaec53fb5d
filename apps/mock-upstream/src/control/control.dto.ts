import { IsBoolean, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

export class AccountDto {
  @IsOptional() @IsInt() @Min(0) rpm?: number;
  @IsOptional() @IsInt() @Min(0) tpm?: number;
  @IsOptional() @IsInt() @Min(0) concurrency?: number;
  @IsOptional() @IsBoolean() banned?: boolean;
  @IsOptional() @IsBoolean() echoKey?: boolean;
}

export class FaultDto {
  /** The account key the fault applies to; `*` for every key. */
  @IsOptional() @IsString() key?: string;
  /** How many requests it applies to; absent = until cleared. */
  @IsOptional() @IsInt() @Min(1) times?: number;
  @IsOptional() @IsInt() @Min(400) @Max(599) status?: number;
  @IsOptional() @IsBoolean() hang?: boolean;
  @IsOptional() @IsInt() @Min(0) latencyMs?: number;
  @IsOptional() @IsInt() @Min(0) chunkDelayMs?: number;
  @IsOptional() @IsInt() @Min(0) disconnectAfterChunks?: number;
  @IsOptional() @IsBoolean() omitUsage?: boolean;
  @IsOptional() @IsString() reply?: string;
  @IsOptional() @IsString() resolvedModel?: string;
  @IsOptional() @IsString() body?: string;
  @IsOptional() @IsString() contentType?: string;
}

export class DefaultsDto {
  @IsOptional() @IsInt() @Min(0) latencyMs?: number;
  @IsOptional() @IsInt() @Min(0) chunkDelayMs?: number;
  @IsOptional() @IsInt() @Min(0) @Max(100) errorRate?: number;
}
