import { baseConfig } from '../../jest.config.base.mjs';

export default {
  ...baseConfig,
  // The client's pure logic (SSE parsing, error explanations) is tested here too.
  testMatch: [...baseConfig.testMatch, '<rootDir>/client/src/**/*.spec.ts'],
  moduleNameMapper: {
    ...baseConfig.moduleNameMapper,
    // See test-support/content-disposition.cjs: an ESM-only package that a CommonJS
    // dependency requires, which Jest on Node 20 cannot load.
    '^content-disposition$': '<rootDir>/test-support/content-disposition.cjs',
  },
};
