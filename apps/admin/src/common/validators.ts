import { BlockList, isIP } from 'node:net';
import { ApiError } from '@switchyard/contracts';
import {
  IsISO8601,
  IsOptional,
  ValidateBy,
  ValidateIf,
  type ValidationOptions,
} from 'class-validator';
import {
  isModelName,
  isModelPattern,
  MODEL_NAME_RULE,
  MODEL_PATTERN_RULE,
} from '@switchyard/domain';

// Field rules shared by several features, each with a message that says what is expected.
// Model names and patterns follow the one language of @switchyard/domain
// (docs/architecture.md, "Model patterns").

export function IsModelName(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isModelName',
      validator: {
        validate: isModelName,
        defaultMessage: (args) => `${args?.property ?? 'model'} must be ${MODEL_NAME_RULE}`,
      },
    },
    options,
  );
}

export function IsModelPattern(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isModelPattern',
      validator: {
        validate: isModelPattern,
        defaultMessage: (args) =>
          `${args?.property ?? 'model'} must be (or, for a list, contain only) ${MODEL_PATTERN_RULE}`,
      },
    },
    options,
  );
}

/** An IPv4/IPv6 address or a CIDR block (`10.0.0.0/8`, `2001:db8::/32`). */
export function isIpOrCidr(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 64) return false;
  const [address, prefix, extra] = value.split('/');
  if (address === undefined || extra !== undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  const bits = Number(prefix);
  if (bits > (family === 4 ? 32 : 128)) return false;
  try {
    new BlockList().addSubnet(address, bits, family === 4 ? 'ipv4' : 'ipv6');
    return true;
  } catch {
    return false;
  }
}

export function IsIpOrCidr(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isIpOrCidr',
      validator: {
        validate: isIpOrCidr,
        defaultMessage: (args) =>
          `each of ${args?.property ?? 'allowIps'} must be an IP address or a CIDR block such as 10.0.0.0/8`,
      },
    },
    options,
  );
}

const MAX_MAPPING_ENTRIES = 500;

/** `{requested model: upstream model}`, exact names on both sides. */
export function IsModelMapping(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isModelMapping',
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
          const entries = Object.entries(value);
          return (
            entries.length <= MAX_MAPPING_ENTRIES &&
            entries.every(([from, to]) => isModelName(from) && isModelName(to))
          );
        },
        defaultMessage: (args) =>
          `${args?.property ?? 'modelMapping'} must be an object of at most ${MAX_MAPPING_ENTRIES} entries mapping a model name to a model name`,
      },
    },
    options,
  );
}

/** Group names a channel serves and a token belongs to. */
export const GROUP_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * A field that must be present, either null (an explicit "none") or passing `check`;
 * one message, whatever is wrong.
 */
export function NullOr(
  check: (value: unknown) => boolean,
  expects: string,
  options?: ValidationOptions,
): PropertyDecorator {
  return ValidateBy(
    {
      name: 'nullOr',
      validator: {
        validate: (value: unknown) => value === null || (value !== undefined && check(value)),
        defaultMessage: (args) => `${args?.property ?? 'value'} is required: ${expects}`,
      },
    },
    options,
  );
}

/** Skips the other rules when the value is null or absent. */
export function NullableOptional(): PropertyDecorator {
  return ValidateIf((_object, value) => value !== null && value !== undefined);
}

/** An optional ISO 8601 date and time in a query string (`2026-01-31` or `2026-01-31T12:00:00Z`). */
export function IsoDateQuery(): PropertyDecorator {
  return (target, key) => {
    IsOptional()(target, key);
    IsISO8601(
      { strict: true },
      { message: `${String(key)} must be an ISO 8601 date such as 2026-01-31T00:00:00Z` },
    )(target, key);
  };
}

/** Reads a validated `IsoDateQuery` value. */
export function toDate(value: string | undefined): Date | undefined {
  return value === undefined ? undefined : new Date(value);
}

/** An http(s) base address without credentials, query or fragment. */
export function isBaseUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 2048) return false;
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      url.hostname !== '' &&
      url.username === '' &&
      url.password === '' &&
      url.search === '' &&
      url.hash === '' &&
      !value.includes('?') &&
      !value.includes('#')
    );
  } catch {
    return false;
  }
}

export function IsBaseUrl(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isBaseUrl',
      validator: {
        validate: isBaseUrl,
        defaultMessage: (args) =>
          `${args?.property ?? 'baseUrl'} must be an http(s) URL without credentials, query or fragment, such as https://relay.example.com`,
      },
    },
    options,
  );
}

/**
 * The base address requests are sent under (`<base>/v1/chat/completions`): trailing
 * slashes go, and so does a full endpoint or `/v1` given by habit (docs/specification.md,
 * "Chat upstream records").
 */
export function normalizeBaseUrl(value: string): string {
  let base = value.trim().replace(/\/+$/, '');
  for (const suffix of ['/v1/chat/completions', '/chat/completions', '/v1']) {
    if (base.toLowerCase().endsWith(suffix)) {
      base = base.slice(0, -suffix.length).replace(/\/+$/, '');
      break;
    }
  }
  return base;
}

/** A 400 `validation_failed` naming one field, for rules a DTO cannot state alone. */
export function fieldError(field: string, message: string): ApiError {
  return new ApiError('validation_failed', message, [{ field, message }]);
}

/** A whole number of micro-dollars, 0 or more, sent as a JSON number like token quotas. */
export function isMicroDollars(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

export function IsMicroDollars(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isMicroDollars',
      validator: {
        validate: isMicroDollars,
        defaultMessage: (args) =>
          `${args?.property ?? 'amount'} must be a whole number of micro-dollars (0 or more; 1 USD = 1,000,000)`,
      },
    },
    options,
  );
}
