import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { APP_ENVIRONMENTS, type AppName } from './environment.js';

/** Raised when the environment is unusable; its message is one line per bad variable. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

type EnvClass<T> = new () => T;

function describe(error: ValidationError, source: Record<string, string | undefined>): string {
  const raw = source[error.property];
  const expects = Object.values(error.constraints ?? {})[0] ?? 'a valid value';
  const got = raw === undefined ? 'it is not set' : `got ${JSON.stringify(raw)}`;
  return `${error.property} must be ${expects} (${got})`;
}

/**
 * Reads and validates the environment into an instance of `schema`.
 * Unset variables keep the class's defaults; variables the class does not declare are ignored.
 */
export function loadEnvironment<T extends object>(
  schema: EnvClass<T>,
  source: Record<string, string | undefined> = process.env,
): T {
  const declared = Object.keys(new schema());
  const relevant: Record<string, string> = {};
  for (const name of declared) {
    const value = source[name];
    if (value !== undefined) relevant[name] = value;
  }
  const env = plainToInstance(schema, relevant, { exposeDefaultValues: true });
  const errors = validateSync(env, { forbidUnknownValues: false });
  if (errors.length > 0) {
    throw new ConfigurationError(
      `Invalid configuration: ${errors.map((e) => describe(e, source)).join('; ')}`,
    );
  }
  return env;
}

/** Every variable any app reads; the deployment manifests may set only these. */
export function knownEnvironmentVariables(): Map<string, AppName[]> {
  const known = new Map<string, AppName[]>();
  for (const [app, schema] of Object.entries(APP_ENVIRONMENTS) as [AppName, EnvClass<object>][]) {
    for (const name of Object.keys(new schema())) {
      known.set(name, [...(known.get(name) ?? []), app]);
    }
  }
  return known;
}
