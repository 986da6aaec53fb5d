import { baseConfig } from '../jest.config.base.mjs';

// Every spec under test/. Specs that need Postgres or Redis add the run's own database and
// namespace with `@switchyard/testing`'s global setup, as the apps' configs do.
export default {
  ...baseConfig,
  rootDir: '..',
  roots: ['<rootDir>/test'],
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
};
