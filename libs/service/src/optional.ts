import { ValidateIf } from 'class-validator';

/**
 * A field that may be left out, but not sent as `null`: the other rules still judge a
 * null (and refuse it, naming the field). class-validator's `IsOptional` skips null too,
 * which let `{"name": null}` through a PATCH to a column that cannot be null: a 500.
 */
export function Optional(): PropertyDecorator {
  return ValidateIf((_object, value) => value !== undefined);
}
