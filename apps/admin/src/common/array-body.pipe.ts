import { type PipeTransform, type Type } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { apiValidationPipe } from '@switchyard/service';
import { Type as TransformType } from 'class-transformer';
import { ArrayMaxSize, IsArray, ValidateNested } from 'class-validator';

/**
 * Validates a body that is a JSON array of `item`, with the same rules as a single body;
 * a bad field is named by its position, e.g. `[2].baseUrl`.
 */
export function arrayBodyPipe<T extends object>(
  item: Type<T>,
  maxItems: number,
): PipeTransform<unknown, Promise<T[]>> {
  class Wrapper {
    @IsArray()
    @ArrayMaxSize(maxItems)
    @ValidateNested({ each: true })
    @TransformType(() => item)
    items!: T[];
  }
  const validation = apiValidationPipe();
  return {
    async transform(value: unknown): Promise<T[]> {
      if (!Array.isArray(value)) {
        const message = 'the body must be a JSON array';
        throw new ApiError('validation_failed', message, [{ field: 'body', message }]);
      }
      try {
        const wrapped = (await validation.transform(
          { items: value },
          { type: 'body', metatype: Wrapper },
        )) as Wrapper;
        return wrapped.items;
      } catch (error) {
        if (!(error instanceof ApiError) || !error.fields) throw error;
        const fields = error.fields.map(({ field, message }) => ({
          field: field.replace(/^items\.(\d+)/, '[$1]').replace(/^items$/, 'body'),
          message: message.replace(/^items /, 'body '),
        }));
        const names = [...new Set(fields.map((f) => f.field))].join(', ');
        throw new ApiError('validation_failed', `Invalid ${names}`, fields);
      }
    },
  };
}
