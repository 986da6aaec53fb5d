import {
  AdminEnv,
  ChatEnv,
  EdgeEnv,
  MeteringEnv,
  MockUpstreamEnv,
  RouterEnv,
  WebEnv,
  loadEnvironment,
} from '@switchyard/config';

// The services `pnpm start` runs, in start order (each waits for the ones before it to be
// healthy). deploy/docker/compose.yaml runs the same ones on the same ports; the deployment
// tests hold the two together.

export interface SuiteService {
  name: 'mock-upstream' | 'admin' | 'router' | 'metering' | 'edge' | 'chat' | 'web';
  /** The variable that sets the port its /healthz answers on. */
  portVariable: string;
  port: number;
  what: string;
  /** V8 flags, as the Kubernetes Deployment passes them. */
  nodeFlags?: string[];
}

export function suiteServices(env: Record<string, string | undefined>): SuiteService[] {
  return [
    {
      name: 'mock-upstream',
      portVariable: 'MOCK_UPSTREAM_PORT',
      port: loadEnvironment(MockUpstreamEnv, env).MOCK_UPSTREAM_PORT,
      what: 'fake OpenAI provider (the demo channel)',
    },
    {
      name: 'admin',
      portVariable: 'ADMIN_PORT',
      port: loadEnvironment(AdminEnv, env).ADMIN_PORT,
      what: 'gateway admin API (use it through the edge at /api)',
    },
    {
      name: 'router',
      portVariable: 'ROUTER_OPS_PORT',
      port: loadEnvironment(RouterEnv, env).ROUTER_OPS_PORT,
      what: 'channel routing (health and metrics only)',
    },
    {
      name: 'metering',
      portVariable: 'METERING_OPS_PORT',
      port: loadEnvironment(MeteringEnv, env).METERING_OPS_PORT,
      what: 'usage metering (health and metrics only)',
      // A larger young generation cuts the worker's CPU per job by about 12 % (docs/performance.md).
      nodeFlags: ['--max-semi-space-size=64'],
    },
    {
      name: 'edge',
      portVariable: 'EDGE_PORT',
      port: loadEnvironment(EdgeEnv, env).EDGE_PORT,
      what: 'the gateway: OpenAI API at /v1, admin API at /api',
      // A smaller young generation than Node 24's default and old space collected before it
      // grows past twice its live size: a peak near 250 MiB instead of 320, for 1-2 % more
      // CPU on long streams (docs/performance.md, "Edge memory").
      nodeFlags: ['--max-semi-space-size=16', '--heap-growing-percent=100'],
    },
    {
      name: 'chat',
      portVariable: 'CHAT_PORT',
      port: loadEnvironment(ChatEnv, env).CHAT_PORT,
      what: 'chat API (use it through web at /api)',
    },
    {
      name: 'web',
      portVariable: 'WEB_PORT',
      port: loadEnvironment(WebEnv, env).WEB_PORT,
      what: 'chat web app and its admin dashboard',
    },
  ];
}
