import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, ValidateBy } from 'class-validator';

// Decorators for environment variables. Each one states, in its message, what the
// variable expects, so a bad value stops start-up with a line an operator can act on.

const toInteger = Transform(({ value }) => {
  if (typeof value !== 'string' || value.trim() === '') return value;
  return /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;
});

export function IntegerVariable(min: number, max: number): PropertyDecorator {
  const expects = `an integer from ${min} to ${max}`;
  return (target, key) => {
    toInteger(target, key);
    IsInt({ message: expects })(target, key);
    Min(min, { message: expects })(target, key);
    Max(max, { message: expects })(target, key);
  };
}

export function PortVariable(): PropertyDecorator {
  return IntegerVariable(1, 65535);
}

export function OneOfVariable(values: readonly string[]): PropertyDecorator {
  return IsIn(values, { message: `one of ${values.join(', ')}` });
}

export function UrlVariable(schemes: readonly string[]): PropertyDecorator {
  const expects = `a URL starting with ${schemes.map((s) => `${s}://`).join(' or ')}`;
  return ValidateBy({
    name: 'isUrlWithScheme',
    validator: {
      validate: (value: unknown) => {
        if (typeof value !== 'string') return false;
        try {
          const url = new URL(value);
          return schemes.includes(url.protocol.slice(0, -1)) && url.hostname !== '';
        } catch {
          return false;
        }
      },
      defaultMessage: () => expects,
    },
  });
}

/** A comma-separated list; empty items are dropped. */
export function ListVariable(itemPattern?: RegExp, itemDescription?: string): PropertyDecorator {
  const toList = Transform(({ value }) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item !== '')
      : value,
  );
  return (target, key) => {
    toList(target, key);
    if (itemPattern) {
      ValidateBy({
        name: 'isListOf',
        validator: {
          validate: (value: unknown) =>
            Array.isArray(value) &&
            value.every((item) => typeof item === 'string' && itemPattern.test(item)),
          defaultMessage: () => `a comma-separated list of ${itemDescription ?? 'values'}`,
        },
      })(target, key);
    }
  };
}

export function TextVariable(
  options: { optional?: boolean; pattern?: RegExp; expects?: string } = {},
) {
  return (target: object, key: string | symbol) => {
    if (options.optional) IsOptional()(target, key);
    IsString({ message: options.expects ?? 'a text value' })(target, key);
    if (options.pattern)
      Matches(options.pattern, { message: options.expects ?? 'a valid value' })(target, key);
  };
}
