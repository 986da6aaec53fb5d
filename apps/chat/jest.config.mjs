import { baseConfig, swcTransform } from '../../jest.config.base.mjs';

// @fastify/static (the OpenAPI page's assets) is CommonJS and requires content-disposition,
// which ships only ESM: Node 20 loads that natively, Jest's CommonJS loader cannot. SWC
// compiles that one package to CommonJS for the tests.
const [swc, swcOptions] = swcTransform;
const ESM_ONLY_REQUIRED = 'content-disposition';

export default {
  ...baseConfig,
  transform: {
    [`/node_modules/.*${ESM_ONLY_REQUIRED}/.*\\.js$`]: [
      swc,
      { ...swcOptions, module: { type: 'commonjs' } },
    ],
    ...baseConfig.transform,
  },
  transformIgnorePatterns: [`/node_modules/(?!(\\.pnpm/)?${ESM_ONLY_REQUIRED}[@/])`],
  // One migrated database and one Redis namespace for the whole run.
  globalSetup: '@switchyard/testing/jest-global-setup',
  globalTeardown: '@switchyard/testing/jest-global-teardown',
  // The spec files share that database and namespace (and reset them): one at a time.
  maxWorkers: 1,
};
