import { applyDecorators } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiProperty,
  ApiPropertyOptional,
} from '@nestjs/swagger';

// OpenAPI descriptions of the error body shared by every route.

class ApiErrorField {
  @ApiProperty({ example: 'baseUrl' }) field!: string;
  @ApiProperty({ example: 'baseUrl must be an http(s) URL' }) message!: string;
}

class ApiErrorDetail {
  @ApiProperty({ example: 'validation_failed', description: 'Stable; match on this' })
  code!: string;
  @ApiProperty() message!: string;
  @ApiPropertyOptional({ type: [ApiErrorField], description: 'Each bad field' })
  fields?: ApiErrorField[];
}

export class ApiErrorResponse {
  @ApiProperty({ type: ApiErrorDetail }) error!: ApiErrorDetail;
}

export function ApiValidationErrors(): MethodDecorator {
  return ApiBadRequestResponse({
    type: ApiErrorResponse,
    description: '`validation_failed`: names each bad field',
  });
}

export function ApiNotFound(what: string): MethodDecorator {
  return ApiNotFoundResponse({
    type: ApiErrorResponse,
    description: `\`not_found\`: no such ${what}`,
  });
}

export function ApiVersionConflict(): MethodDecorator {
  return applyDecorators(
    ApiConflictResponse({
      type: ApiErrorResponse,
      description: '`version_conflict`: changed by someone else since it was read',
    }),
  );
}
