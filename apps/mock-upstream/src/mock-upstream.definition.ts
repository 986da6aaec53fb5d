import { MockUpstreamEnv } from '@switchyard/config';
import { type ServiceDefinition } from '@switchyard/service';
import { MockUpstreamModule } from './app.module.js';

/** How the fake upstream is built: by `main.ts`, and by the specs that start it. */
export const mockUpstreamDefinition: ServiceDefinition<MockUpstreamEnv> = {
  name: 'mock-upstream',
  environment: MockUpstreamEnv,
  module: (env) => MockUpstreamModule.forRoot(env),
  port: (env) => env.MOCK_UPSTREAM_PORT,
  bodyLimit: () => 32 * 1024 * 1024,
};
