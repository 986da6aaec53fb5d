import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { APP_START_TIMEOUT_MS, freePort, repositoryRoot, waitForHttp } from '@switchyard/testing';

const NGINX = '/usr/sbin/nginx';
const DEPLOYED_CONFIG = path.join(repositoryRoot, 'deploy/nginx/switchyard.conf');

/**
 * The machine's nginx in a temporary prefix on a free port, in one of two modes:
 * - in front of edges (`new Nginx(edgeUrls)`), with the deployed reverse-proxy configuration
 *   (deploy/nginx). The only changes to the deployed file: where it listens, and that it
 *   proxies to the given edges (an upstream group) instead of one on :3000;
 * - a balancer over the replicas of another service (`Nginx.balancer(urls)`), as a
 *   Kubernetes Service is in front of the admin and chat pods (deploy/k8s), round robin.
 *   Each answer names the replica that gave it in `X-Served-By`, so that a test can tell
 *   them apart.
 */
export class Nginx {
  private server: ChildProcess | undefined;
  private prefix = '';
  port = 0;

  constructor(
    private readonly upstreamUrls: string[],
    private readonly mode: 'edges' | 'balancer' = 'edges',
  ) {}

  static balancer(replicaUrls: string[]): Nginx {
    return new Nginx(replicaUrls, 'balancer');
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.port = await freePort();
    this.prefix = await mkdtemp(path.join(tmpdir(), 'sy-nginx-'));
    // Workers run as an unprivileged user when the test runs as root: they must be able to
    // write their temporary files.
    await chmod(this.prefix, 0o755);
    for (const dir of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
      await mkdir(path.join(this.prefix, dir));
      await chmod(path.join(this.prefix, dir), 0o777);
    }
    await writeFile(path.join(this.prefix, 'switchyard.conf'), await this.siteConfig());
    await writeFile(path.join(this.prefix, 'nginx.conf'), this.mainConfig());
    this.server = spawn(NGINX, ['-p', this.prefix, '-c', 'nginx.conf'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    this.server.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    // An upstream's /healthz through nginx: both the proxy and a server behind it answer.
    await waitForHttp(`${this.url}/healthz`, APP_START_TIMEOUT_MS, () => {
      if (this.server?.exitCode !== null) throw new Error(`nginx exited: ${errors}`);
    });
  }

  async stop(): Promise<void> {
    if (this.server && this.server.exitCode === null && this.server.signalCode === null) {
      const exited = once(this.server, 'exit');
      this.server.kill('SIGQUIT');
      await exited;
    }
    if (this.prefix) await rm(this.prefix, { recursive: true, force: true });
  }

  private async siteConfig(): Promise<string> {
    const upstream = this.mode === 'edges' ? 'switchyard_edges' : 'switchyard_replicas';
    const servers = this.upstreamUrls.map((url) => `    server ${new URL(url).host};`).join('\n');
    return [
      `upstream ${upstream} {\n${servers}\n    keepalive 32;\n}\n`,
      this.mode === 'edges' ? await this.deployedSite(upstream) : this.balancerSite(upstream),
    ].join('\n');
  }

  private async deployedSite(upstream: string): Promise<string> {
    const deployed = await readFile(DEPLOYED_CONFIG, 'utf8');
    const listen = /^(\s*)listen 80;$/m;
    const proxyPass = /^(\s*)proxy_pass http:\/\/127\.0\.0\.1:3000;$/m;
    if (!listen.test(deployed) || !proxyPass.test(deployed))
      throw new Error(`${DEPLOYED_CONFIG} changed: update how the test derives its config`);
    return deployed
      .replace(listen, `$1listen 127.0.0.1:${this.port};`)
      .replace(proxyPass, `$1proxy_pass http://${upstream};`);
  }

  private balancerSite(upstream: string): string {
    // `Connection ""` keeps connections to the replicas open (the upstream's keepalive), and
    // chat replies are event streams, passed on event by event. nginx's defaults do the rest:
    // a request goes on to the next replica when one refuses the connection, or breaks it
    // before answering unless the request is a POST (not idempotent); a replica that failed
    // is left out for 10 s (max_fails=1, fail_timeout=10s).
    return `server {
    listen 127.0.0.1:${this.port};
    location / {
        proxy_pass http://${upstream};
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_buffering off;
        add_header X-Served-By $upstream_addr always;
    }
}
`;
  }

  private mainConfig(): string {
    const at = (name: string) => path.join(this.prefix, name);
    return `daemon off;
worker_processes 1;
pid ${at('nginx.pid')};
error_log ${at('error.log')} warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path ${at('client_body')};
    proxy_temp_path ${at('proxy')};
    fastcgi_temp_path ${at('fastcgi')};
    uwsgi_temp_path ${at('uwsgi')};
    scgi_temp_path ${at('scgi')};
    include ${at('switchyard.conf')};
}
`;
  }
}
