export * from './environment.js';
export {
  ConfigurationError,
  knownEnvironmentVariables,
  loadEnvironment,
} from './load-environment.js';
