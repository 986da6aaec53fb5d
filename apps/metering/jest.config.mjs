import { baseConfig } from '../../jest.config.base.mjs';

export default {
  ...baseConfig,
  // One migrated database and one Redis namespace for the whole run.
  globalSetup: '@switchyard/testing/jest-global-setup',
  globalTeardown: '@switchyard/testing/jest-global-teardown',
  // One spec file at a time: postgres-outage.spec stops Postgres for a few seconds, which
  // must not fail the database work of another file running beside it.
  maxWorkers: 1,
};
