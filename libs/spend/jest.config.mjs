import { baseConfig } from '../../jest.config.base.mjs';

export default baseConfig;
