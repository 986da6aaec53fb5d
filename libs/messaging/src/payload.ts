import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';

export class InvalidPayloadError extends Error {
  override readonly name = 'InvalidPayloadError';
}

/** Turns a received plain object into an instance of `schema`, or says what is wrong with it. */
export function validatePayload<T extends object>(schema: new () => T, data: unknown): T {
  if (typeof data !== 'object' || data === null) {
    throw new InvalidPayloadError(`expected an object for ${schema.name}`);
  }
  const payload = plainToInstance(schema, data);
  const errors = validateSync(payload, { forbidUnknownValues: false });
  if (errors.length > 0) {
    const fields = errors.map((e) => e.property).join(', ');
    throw new InvalidPayloadError(`${schema.name} has invalid fields: ${fields}`);
  }
  return payload;
}
