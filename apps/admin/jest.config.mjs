import { baseConfig, swcTransform } from '../../jest.config.base.mjs';

const [swc, swcOptions] = swcTransform;

export default {
  ...baseConfig,
  transform: {
    ...baseConfig.transform,
    // Swagger UI is served by @fastify/static (CommonJS), which requires content-disposition
    // (ESM only). Node 20 loads that natively; Jest's CommonJS loader needs it compiled.
    '/content-disposition/.+\\.js$': [swc, { ...swcOptions, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/)?content-disposition[@/])'],
  // One migrated database and one Redis namespace for the whole run.
  globalSetup: '@switchyard/testing/jest-global-setup',
  globalTeardown: '@switchyard/testing/jest-global-teardown',
};
