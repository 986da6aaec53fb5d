import { Injectable, Param, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';

const MAX_ID = 2_147_483_647;

/**
 * A positive integer id from the path. The global validation pipe may already have turned
 * the text into a number, so both forms are accepted.
 */
@Injectable()
export class IdPipe implements PipeTransform<unknown, number> {
  transform(value: unknown, metadata: ArgumentMetadata): number {
    const id =
      typeof value === 'number' ? value : /^\d{1,10}$/.test(String(value)) ? Number(value) : NaN;
    if (Number.isSafeInteger(id) && id >= 1 && id <= MAX_ID) return id;
    const field = metadata.data ?? 'id';
    const message = `${field} must be a positive integer`;
    throw new ApiError('validation_failed', message, [{ field, message }]);
  }
}

/** `@IdParam() id: number`: the `:id` segment, validated. */
export function IdParam(name = 'id'): ParameterDecorator {
  return Param(name, IdPipe);
}
