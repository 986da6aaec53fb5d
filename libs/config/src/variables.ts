import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, ValidateBy } from 'class-validator';

// Decorators for environment variables. Each one states, in its message, what the
// variable expects, so a bad value stops start-up with a line an operator can act on.

const toInteger = Transform(({ value }: { value: unknown }) => {
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
  const toList = Transform(({ value }: { value: unknown }) =>
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

/**
 * An IANA time zone this runtime knows (`UTC`, `Europe/Berlin`): `isTimeZone` of
 * libs/domain's budgets.ts, restated here, since domain's specs build on this library.
 */
export function TimeZoneVariable(): PropertyDecorator {
  return ValidateBy({
    name: 'isTimeZone',
    validator: {
      validate: (value: unknown) => {
        if (typeof value !== 'string' || value === '') return false;
        try {
          new Intl.DateTimeFormat('en-US', { timeZone: value });
          return true;
        } catch {
          return false;
        }
      },
      defaultMessage: () => 'an IANA time zone such as UTC or Europe/Berlin',
    },
  });
}

/** A variable only a test may set: refused when NODE_ENV is `production`. */
export function TestOnlyVariable(): PropertyDecorator {
  return (target, key) => {
    IsOptional()(target, key);
    ValidateBy({
      name: 'isTestOnly',
      validator: {
        validate: (value: unknown, args) =>
          typeof value === 'string' &&
          (args?.object as { NODE_ENV?: string }).NODE_ENV !== 'production',
        defaultMessage: () => 'unset in production (it is a test hook)',
      },
    })(target, key);
  };
}

/**
 * Regular expressions (JavaScript syntax), as a JSON array of strings: regexes hold commas,
 * so a comma-separated list would not do. Each must compile.
 */
export function PatternListVariable(): PropertyDecorator {
  const expects = 'a JSON array of regular expressions, e.g. ["acct-[0-9]{8}"]';
  const toList = Transform(({ value }: { value: unknown }) => {
    if (typeof value !== 'string') return value;
    if (value.trim() === '') return [];
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  });
  return (target, key) => {
    toList(target, key);
    ValidateBy({
      name: 'isPatternList',
      validator: {
        validate: (value: unknown) =>
          Array.isArray(value) &&
          value.every((item) => {
            if (typeof item !== 'string' || item === '') return false;
            try {
              new RegExp(item, 'g');
              return true;
            } catch {
              return false;
            }
          }),
        defaultMessage: () => expects,
      },
    })(target, key);
  };
}
