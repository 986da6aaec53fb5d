import { baseConfig } from '../../jest.config.base.mjs';

export default {
  ...baseConfig,
  // One migrated database and one Redis namespace for the whole run.
  globalSetup: '@switchyard/testing/jest-global-setup',
  globalTeardown: '@switchyard/testing/jest-global-teardown',
  // One spec file at a time, as when postgres-outage.spec stopped the machine's Postgres
  // (it now stops a private one of its own); running files side by side was not measured.
  maxWorkers: 1,
};
