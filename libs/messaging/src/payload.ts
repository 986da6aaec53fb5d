import { plainToInstance } from 'class-transformer';
import {
  getMetadataStorage,
  validateSync,
  ValidationTypes,
  type MetadataStorage,
} from 'class-validator';

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

/**
 * `validatePayload`'s rules for one contract class, with class-validator's metadata read
 * once: the decorators of `schema` decide, and class-validator's own constraints check each
 * value, but the per-call work of class-validator (finding and grouping the metadata,
 * building error objects) and class-transformer's copy are gone. For the hot path of a
 * message that arrives thousands of times a second (usage records; docs/performance.md,
 * "Metering"). The data is checked in place and returned as it is, not copied into an
 * instance.
 *
 * Supports what contracts use: constraints, `@IsOptional`, and `@ValidateNested` with
 * class-transformer's `@Type`. A class with anything else (asynchronous constraints,
 * promise validation, a nested property without `@Type`) is refused when the validator
 * is made, never validated less strictly.
 */
export function payloadValidator<T extends object>(schema: new () => T): (data: unknown) => T {
  const invalidFields = compileSchema(schema, getMetadataStorage());
  return (data) => {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      throw new InvalidPayloadError(`expected an object for ${schema.name}`);
    }
    const fields = invalidFields(data as Record<string, unknown>);
    if (fields.length > 0) {
      throw new InvalidPayloadError(`${schema.name} has invalid fields: ${fields.join(', ')}`);
    }
    return data as T;
  };
}

type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];
type Subject = Record<string, unknown>;
type Schema = new () => object;
/** True when the value of the property passes every rule of the property. */
type PropertyCheck = (object: Subject, value: unknown) => boolean;

function compileSchema(schema: Schema, storage: MetadataStorage): (object: Subject) => string[] {
  const grouped = storage.groupByPropertyName(
    storage.getTargetValidationMetadatas(schema, '', false, false),
  );
  const properties = Object.entries(grouped).map(([name, metadatas]) => ({
    name,
    check: compileProperty(schema, name, metadatas, storage),
  }));
  if (properties.length === 0) throw new Error(`${schema.name} has no validation rules`);
  return (object) => {
    const invalid: string[] = [];
    for (const property of properties) {
      if (!property.check(object, object[property.name])) invalid.push(property.name);
    }
    return invalid;
  };
}

const SUPPORTED: ReadonlySet<string> = new Set([
  ValidationTypes.CONDITIONAL_VALIDATION,
  ValidationTypes.IS_DEFINED,
  ValidationTypes.CUSTOM_VALIDATION,
  ValidationTypes.NESTED_VALIDATION,
]);

/** In the order of class-validator's executor: conditions, then definedness, constraints, nesting. */
function compileProperty(
  schema: Schema,
  name: string,
  metadatas: ValidationMetadata[],
  storage: MetadataStorage,
): PropertyCheck {
  const unsupported = metadatas.find((m) => !SUPPORTED.has(m.type));
  if (unsupported) {
    throw new Error(`${schema.name}.${name}: ${unsupported.type} is not supported here`);
  }
  const conditions = metadatas
    .filter((m) => m.type === ValidationTypes.CONDITIONAL_VALIDATION)
    .map((m) => m.constraints[0] as (object: Subject, value: unknown) => boolean);
  const constraints = metadatas
    .filter(
      (m) => m.type === ValidationTypes.IS_DEFINED || m.type === ValidationTypes.CUSTOM_VALIDATION,
    )
    .flatMap((m) => compileConstraints(schema, name, m, storage));
  const nested = metadatas.some((m) => m.type === ValidationTypes.NESTED_VALIDATION)
    ? compileNested(schema, name, storage)
    : undefined;
  return (object, value) => {
    for (const condition of conditions) if (!condition(object, value)) return true;
    for (const constraint of constraints) if (!constraint(object, value)) return false;
    return nested === undefined || nested(value);
  };
}

function compileConstraints(
  schema: Schema,
  name: string,
  metadata: ValidationMetadata,
  storage: MetadataStorage,
): PropertyCheck[] {
  return storage.getTargetValidatorConstraints(metadata.constraintCls).map((constraint) => {
    if (constraint.async) {
      throw new Error(`${schema.name}.${name}: asynchronous constraints are not supported here`);
    }
    const { instance } = constraint;
    return (object, value) => {
      if (metadata.validateIf && !metadata.validateIf(object, value)) return true;
      const args = {
        targetName: schema.name,
        property: name,
        object,
        value,
        constraints: metadata.constraints,
      };
      if (metadata.each && isCollection(value)) {
        for (const item of collectionItems(value)) if (!instance.validate(item, args)) return false;
        return true;
      }
      return Boolean(instance.validate(value, args));
    };
  });
}

/**
 * The nested class is the one class-transformer's `@Type` makes of the property: asked once,
 * by turning an object with that property alone into an instance.
 */
function compileNested(
  schema: Schema,
  name: string,
  storage: MetadataStorage,
): (value: unknown) => boolean {
  const probe = (plainToInstance(schema, { [name]: {} }) as Subject)[name];
  const nestedClass = (probe as object | undefined)?.constructor as Schema | undefined;
  if (!nestedClass || (nestedClass as unknown) === Object) {
    throw new Error(`${schema.name}.${name}: @ValidateNested needs class-transformer's @Type`);
  }
  const invalidFields = compileSchema(nestedClass, storage);
  const valid = (value: unknown): boolean => {
    if (value === undefined) return true;
    if (isCollection(value)) {
      for (const item of collectionItems(value)) if (!valid(item)) return false;
      return true;
    }
    return value instanceof Object && invalidFields(value as Subject).length === 0;
  };
  return valid;
}

function isCollection(value: unknown): value is unknown[] | Set<unknown> | Map<unknown, unknown> {
  return Array.isArray(value) || value instanceof Set || value instanceof Map;
}

function collectionItems(
  value: unknown[] | Set<unknown> | Map<unknown, unknown>,
): Iterable<unknown> {
  return value instanceof Map ? value.values() : value;
}
