import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, WaitAborted, waitFor } from '@switchyard/testing';
import { Redis } from 'ioredis';

// Real Redis topologies of a test's own, on free ports: a master with a replica watched by
// three Sentinels, or a six-node cluster (three masters, three replicas). Every process is
// the test's child and is killed by `stop()`, which specs call in afterAll, failed or not.

const run = promisify(execFile);

const COMMON = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];

class Processes {
  protected readonly children: ChildProcess[] = [];
  protected directory = '';

  protected async workDirectory(): Promise<string> {
    return (this.directory ||= await mkdtemp(path.join(tmpdir(), 'sy-topology-')));
  }

  /** In the test's directory: a replica's full sync writes an RDB file to its cwd. */
  protected start(command: string, args: string[]): ChildProcess {
    const child = spawn(command, args, { stdio: 'ignore', cwd: this.directory });
    // A missing binary is reported by the wait for its port, with the reason here.
    child.on('error', (error) => {
      this.failures.push(`${command}: ${error.message} (apt-get install ${command})`);
    });
    this.children.push(child);
    if (this.children.length === 1) process.once('exit', this.killLeftOver);
    return child;
  }

  /**
   * When the test process exits before `stop()` ran (an afterAll that timed out, Jest's
   * forced exit), its servers go with it instead of outliving the run on their ports.
   */
  private readonly killLeftOver = () => {
    for (const child of this.children) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  };

  protected readonly failures: string[] = [];

  /** Waits for a server to answer, or stops at once when a process could not start. */
  protected async answers(port: number): Promise<void> {
    const client = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      retryStrategy: () => 50,
    });
    client.on('error', () => undefined);
    try {
      await waitFor(
        async () => {
          if (this.failures.length > 0) throw new WaitAborted(this.failures.join('; '));
          return (await client.ping().catch(() => '')) === 'PONG';
        },
        { what: `redis on ${port}`, intervalMs: 20 },
      );
    } finally {
      client.disconnect();
    }
  }

  async stop(): Promise<void> {
    process.off('exit', this.killLeftOver);
    await Promise.all(
      this.children.map(async (child) => {
        // A binary that could not start has no process, and never exits.
        if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }),
    );
    if (this.directory) await rm(this.directory, { recursive: true, force: true });
  }
}

async function ask(port: number, ...command: string[]): Promise<unknown> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.call(command[0]!, ...command.slice(1));
  } finally {
    client.disconnect();
  }
}

export class SentinelTopology extends Processes {
  readonly masterName = 'mymaster';
  private master: ChildProcess | undefined;
  private replica: ChildProcess | undefined;
  masterPort = 0;
  replicaPort = 0;
  sentinelPorts: number[] = [];

  get url(): string {
    const hosts = this.sentinelPorts.map((port) => `127.0.0.1:${port}`).join(',');
    return `redis+sentinel://${hosts}/${this.masterName}`;
  }

  async startAll(): Promise<void> {
    const dir = await this.workDirectory();
    const inDir = ['--dir', dir];
    this.masterPort = await freePort();
    this.replicaPort = await freePort();
    this.master = this.start('redis-server', [
      '--port',
      String(this.masterPort),
      ...COMMON,
      ...inDir,
    ]);
    this.replica = this.start('redis-server', [
      '--port',
      String(this.replicaPort),
      '--replicaof',
      '127.0.0.1',
      String(this.masterPort),
      ...COMMON,
      ...inDir,
    ]);
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      this.sentinelPorts.push(port);
      // Sentinel rewrites its file: one each, in the test's directory.
      const file = path.join(dir, `sentinel-${port}.conf`);
      await writeFile(
        file,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${this.masterName} 127.0.0.1 ${this.masterPort} 2`,
          `sentinel down-after-milliseconds ${this.masterName} 1000`,
          `sentinel failover-timeout ${this.masterName} 4000`,
          `sentinel parallel-syncs ${this.masterName} 1`,
          '',
        ].join('\n'),
      );
      this.start('redis-sentinel', [file]);
    }
    await Promise.all(
      [this.masterPort, this.replicaPort, ...this.sentinelPorts].map((port) => this.answers(port)),
    );
    // A failover needs the Sentinels to know the replica and each other.
    await waitFor(
      async () => {
        for (const port of this.sentinelPorts) {
          const replicas = (await ask(port, 'SENTINEL', 'REPLICAS', this.masterName)) as unknown[];
          const peers = (await ask(port, 'SENTINEL', 'SENTINELS', this.masterName)) as unknown[];
          if (replicas.length !== 1 || peers.length !== 2) return false;
        }
        const info = String(await ask(this.masterPort, 'INFO', 'replication'));
        return /connected_slaves:1/.test(info) && /state=online/.test(info);
      },
      { what: 'Sentinels that know the replica and each other', timeoutMs: 30_000 },
    );
  }

  /** The master dies at once (SIGKILL), as a crashed node does. */
  async killMaster(): Promise<void> {
    const master = this.master!;
    const exited = once(master, 'exit');
    master.kill('SIGKILL');
    await exited;
  }

  /**
   * The replica stops (SIGSTOP) until the returned function is called: connected, as a
   * stuck process is, but acknowledging nothing.
   */
  pauseReplica(): () => void {
    const replica = this.replica!;
    replica.kill('SIGSTOP');
    return () => replica.kill('SIGCONT');
  }

  async currentMasterPort(): Promise<number> {
    const [, port] = (await ask(
      this.sentinelPorts[0]!,
      'SENTINEL',
      'GET-MASTER-ADDR-BY-NAME',
      this.masterName,
    )) as [string, string];
    return Number(port);
  }
}

export class ClusterTopology extends Processes {
  ports: number[] = [];
  private readonly byPort = new Map<number, ChildProcess>();

  get nodes(): string {
    return this.ports.map((port) => `127.0.0.1:${port}`).join(',');
  }

  async startAll(): Promise<void> {
    const dir = await this.workDirectory();
    for (let i = 0; i < 6; i++) this.ports.push(await freePort());
    for (const port of this.ports) {
      const child = this.start('redis-server', [
        '--port',
        String(port),
        // The cluster bus listens on its port + 10000 unless told: that may be an ephemeral
        // port some outgoing connection holds. A free one is drawn for it as for the node.
        '--cluster-port',
        String(await freePort()),
        ...COMMON,
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        path.join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        '2000',
      ]);
      this.byPort.set(port, child);
    }
    await Promise.all(this.ports.map((port) => this.answers(port)));
    await run('redis-cli', [
      '--cluster',
      'create',
      ...this.ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    ]);
    await waitFor(
      async () => {
        for (const port of this.ports) {
          if (!/cluster_state:ok/.test(String(await ask(port, 'CLUSTER', 'INFO')))) return false;
        }
        return true;
      },
      { what: 'the cluster in state ok', timeoutMs: 30_000 },
    );
  }

  /** The port of the master that serves the slot of `key` now, as a live node sees it. */
  async masterOf(key: string): Promise<number> {
    const alive = this.ports.find((port) => {
      const child = this.byPort.get(port);
      return child?.exitCode === null && child.signalCode === null;
    });
    const slot = Number(await ask(alive!, 'CLUSTER', 'KEYSLOT', key));
    const nodes = String(await ask(alive!, 'CLUSTER', 'NODES'))
      .trim()
      .split('\n');
    for (const line of nodes) {
      const [, address, flags, , , , , , ...ranges] = line.split(' ');
      if (!flags?.includes('master') || flags.includes('fail')) continue;
      for (const range of ranges) {
        const [from, to = from] = range.split('-').map(Number);
        if (slot >= from! && slot <= to!) return Number(address!.split('@')[0]!.split(':')[1]);
      }
    }
    throw new Error(`no live master serves the slot of ${key}`);
  }

  /** The port of the replica of the master on `port`, once it is in sync with it. */
  private async replicaInSync(port: number): Promise<number> {
    // A replica that has not finished its first sync has no data to take over with, and
    // never will be promoted: wait for its link to be up (a loaded machine takes seconds).
    return waitFor(
      async () => {
        const nodes = String(await ask(port, 'CLUSTER', 'NODES'))
          .trim()
          .split('\n');
        const id = nodes.find((line) => line.includes('myself'))!.split(' ')[0]!;
        const replica = nodes.find((line) => line.split(' ')[3] === id);
        if (!replica) return undefined;
        const replicaPort = Number(replica.split(' ')[1]!.split('@')[0]!.split(':')[1]);
        const info = String(await ask(replicaPort, 'INFO', 'replication'));
        return /master_link_status:up/.test(info) ? replicaPort : undefined;
      },
      { what: `the replica of the master on ${port} in sync`, timeoutMs: 30_000 },
    );
  }

  /** The master serving `key` dies at once (SIGKILL); its replica is left to take over. */
  async killMasterOf(key: string): Promise<number> {
    const port = await this.masterOf(key);
    await this.replicaInSync(port);
    const master = this.byPort.get(port)!;
    const exited = once(master, 'exit');
    master.kill('SIGKILL');
    await exited;
    return port;
  }

  /**
   * The replica of the master serving `key` stops (SIGSTOP) until the returned function
   * is called: connected, as a stuck process is, but acknowledging nothing.
   */
  async pauseReplicaOf(key: string): Promise<() => void> {
    const replica = this.byPort.get(await this.replicaInSync(await this.masterOf(key)))!;
    replica.kill('SIGSTOP');
    return () => replica.kill('SIGCONT');
  }
}
