import { baseConfig } from '../../jest.config.base.mjs';

export default {
  ...baseConfig,
  moduleNameMapper: {
    ...baseConfig.moduleNameMapper,
    // See test-support/content-disposition.cjs: an ESM-only package that a CommonJS
    // dependency requires, which Jest on Node 20 cannot load.
    '^content-disposition$': '<rootDir>/test-support/content-disposition.cjs',
  },
};
