import { baseConfig } from '../jest.config.base.mjs';

// Jest takes reporters and the test timeout from the top level only, the rest per project.
const { reporters, testTimeout: _topLevelOnly, ...perProject } = baseConfig;
const project = { ...perProject, rootDir: import.meta.dirname };

export default {
  reporters,
  // Each end-to-end test drives several processes and may wait on a few conditions, each up
  // to WAIT_TIMEOUT_MS; starting a stack has its own bound (support/stack.ts).
  testTimeout: 120_000,
  // One migrated database and one Redis namespace for the whole run.
  globalSetup: '@switchyard/testing/jest-global-setup',
  globalTeardown: '@switchyard/testing/jest-global-teardown',
  projects: [
    {
      ...project,
      displayName: 'e2e',
      testMatch: ['<rootDir>/**/*.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/web/'],
    },
    {
      // The browser suites share one chat stack, started only when one of them runs, and
      // empty it for each other: they run one at a time (package.json's test script).
      ...project,
      displayName: 'web',
      testMatch: ['<rootDir>/web/**/*.spec.ts'],
      globalSetup: '<rootDir>/support/web-stack.setup.ts',
      globalTeardown: '<rootDir>/support/web-stack.teardown.ts',
    },
  ],
};
