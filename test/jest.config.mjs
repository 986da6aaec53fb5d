import { baseConfig } from '../jest.config.base.mjs';

export default {
  ...baseConfig,
  testMatch: ['<rootDir>/**/*.spec.ts'],
  testTimeout: 60_000,
  // One migrated database and one Redis namespace for the whole run.
  globalSetup: '@switchyard/testing/jest-global-setup',
  globalTeardown: '@switchyard/testing/jest-global-teardown',
};
