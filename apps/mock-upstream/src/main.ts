import { MockUpstreamEnv } from '@switchyard/config';
import { startService } from '@switchyard/service';
import { MockUpstreamModule } from './app.module.js';

await startService({
  name: 'mock-upstream',
  environment: MockUpstreamEnv,
  module: (env) => MockUpstreamModule.forRoot(env),
  port: (env) => env.MOCK_UPSTREAM_PORT,
  bodyLimit: () => 32 * 1024 * 1024,
});
