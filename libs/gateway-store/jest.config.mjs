import { baseConfig } from '../../jest.config.base.mjs';

export default {
  ...baseConfig,
  // One migrated database for the whole run.
  globalSetup: '@switchyard/testing/jest-global-setup',
  globalTeardown: '@switchyard/testing/jest-global-teardown',
};
