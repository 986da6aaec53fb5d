import path from 'node:path';

// Shared Jest settings: native ESM (NestJS 12 ships only ESM), TypeScript through SWC.
// Each package's jest.config.mjs spreads this and adds what it needs.
export const swcTransform = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2023',
      keepClassNames: true,
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

export const baseConfig = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swcTransform },
  // Sources import siblings as `./x.js` (NodeNext); Jest must find `./x.ts`.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
  // A bound against hangs, not a speed check: above the 20 s a test waits for a condition
  // (libs/testing's WAIT_TIMEOUT_MS), so that wait fails first with its own message, and
  // generous for a busy machine (docs/architecture.md, "Waiting in tests").
  testTimeout: 60_000,
  // A run that leaves something open fails instead of hanging (jest.exit-guard.mjs).
  reporters: ['default', path.join(import.meta.dirname, 'jest.exit-guard.mjs')],
};
