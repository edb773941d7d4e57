/**
 * Test and benchmark harness: real `nats-server` processes with JetStream on free loopback ports and
 * temporary store directories, either one server or a cluster (`--cluster_name`, `--routes`).
 *
 * Nothing here touches a developer's running NATS (the default 4222): every server gets its own
 * ports and its own store, and `close()` kills the processes and removes the directories. A process
 * `exit` hook kills whatever a crashed test left running.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { connect, type NatsConnection } from 'nats';

/** The `nats-server` binary on the PATH, or undefined when it is not installed. */
export function natsServerBinary(): string | undefined {
  const r = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? 'nats-server' : undefined;
}

/** Why tests that need `nats-server` are skipped, or undefined when they can run. */
export const NATS_SERVER_MISSING: string | undefined =
  natsServerBinary() === undefined ? 'nats-server is not installed (scripts/services.sh installs it)' : undefined;

/** A free TCP port on 127.0.0.1 (bound, read and released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One `nats-server` process; it can be killed and started again on the same ports and store. */
export class NatsNode {
  readonly url: string;
  private child: ChildProcess | undefined;
  private log: string[] = [];

  constructor(
    readonly name: string,
    readonly clientPort: number,
    readonly storeDir: string,
    private readonly cluster?: { name: string; port: number; routes: readonly number[]; monitorPort: number },
    private readonly maxFileStore = 1024 ** 4,
  ) {
    this.url = `nats://127.0.0.1:${clientPort}`;
  }

  /**
   * The server's JetStream report (`/jsz` on its monitoring port; cluster nodes only), or
   * undefined when the node is down or does not answer.
   */
  async jsz(): Promise<JetStreamReport | undefined> {
    if (this.cluster === undefined || !this.running) return undefined;
    try {
      const res = await fetch(`http://127.0.0.1:${this.cluster.monitorPort}/jsz`, { signal: AbortSignal.timeout(1_000) });
      return res.ok ? ((await res.json()) as JetStreamReport) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The server's configuration file. JetStream's file-store limit is set far above the streams'
   * byte limits, because a server refuses a stream whose `max_bytes` exceeds what it has left
   * (by default 75% of the free disk), and a CI disk may be small. A test of that refusal gives
   * a smaller limit (`NatsServerOptions.maxFileStore`); nothing is allocated up front either way.
   */
  private config(): string {
    const lines = [
      'listen: 127.0.0.1:' + String(this.clientPort),
      `server_name: "${this.name}"`,
      `jetstream { store_dir: "${this.storeDir}", max_file_store: ${this.maxFileStore}, max_memory_store: ${1024 ** 3} }`,
    ];
    if (this.cluster !== undefined) {
      const routes = this.cluster.routes.map((p) => `"nats://127.0.0.1:${p}"`).join(', ');
      lines.push(`cluster { name: "${this.cluster.name}", listen: 127.0.0.1:${this.cluster.port}, routes: [${routes}] }`);
      lines.push(`http: 127.0.0.1:${this.cluster.monitorPort}`);
    }
    return `${lines.join('\n')}\n`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last lines the server printed (for failure messages). */
  recentLog(lines = 20): string {
    return this.log.slice(-lines).join('\n');
  }

  /** Starts the process and waits until it accepts client connections. */
  async start(timeoutMs = 10_000): Promise<void> {
    if (this.running) return;
    mkdirSync(this.storeDir, { recursive: true });
    const configFile = join(this.storeDir, 'server.conf');
    writeFileSync(configFile, this.config());
    const child = spawn('nats-server', ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
    track(child);
    this.child = child;
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) if (line !== '') this.log.push(line);
      if (this.log.length > 200) this.log = this.log.slice(-100);
    });
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`nats-server ${this.name} exited at start:\n${this.recentLog()}`);
      try {
        const nc = await connect({ servers: this.url, reconnect: false, timeout: 500 });
        await nc.close();
        return;
      } catch {
        await sleep(50);
      }
    }
    throw new Error(`nats-server ${this.name} did not accept connections within ${timeoutMs} ms:\n${this.recentLog()}`);
  }

  /** Kills the process (`SIGKILL`, a crash, by default) and waits until it has exited. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (child === undefined || !this.running) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

/** The part of a server's `/jsz` monitoring report the tests read. */
export interface JetStreamReport {
  meta_cluster?: {
    name?: string;
    leader?: string;
    cluster_size?: number;
    replicas?: { name: string; current: boolean; offline?: boolean; active?: number }[];
  };
}

export interface NatsServerOptions {
  /** Server name; default `tp-test-<port>`. */
  name?: string;
  /** JetStream file store the server may reserve for streams, bytes; default 1 TiB. */
  maxFileStore?: number;
}

/** One JetStream server, not clustered. */
export class NatsServer {
  private constructor(
    readonly node: NatsNode,
    private readonly dir: string,
  ) {}

  get url(): string {
    return this.node.url;
  }

  static async start(options: NatsServerOptions = {}): Promise<NatsServer> {
    // The port is picked then released; another process may take it in between. Retry once.
    for (let attempt = 1; ; attempt++) {
      const dir = mkdtempSync(join(tmpdir(), 'tp-nats-'));
      const port = await freePort();
      const node = new NatsNode(options.name ?? `tp-test-${port}`, port, dir, undefined, options.maxFileStore);
      try {
        await node.start();
        return new NatsServer(node, dir);
      } catch (err) {
        await node.kill();
        rmSync(dir, { recursive: true, force: true });
        if (attempt >= 2) throw err;
      }
    }
  }

  async close(): Promise<void> {
    await this.node.kill('SIGTERM');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface NatsClusterOptions {
  /** Number of servers; default 3. */
  size?: number;
  /** Cluster name; default `tp-test-<first client port>`. */
  name?: string;
  /** How long to wait for the JetStream meta leader; default 20 s. */
  leaderTimeoutMs?: number;
}

/**
 * A JetStream cluster of `nats-server` processes on loopback, every node routed to every other.
 * `start` returns once the cluster has a JetStream meta leader.
 */
export class NatsCluster {
  private constructor(
    readonly name: string,
    readonly nodes: readonly NatsNode[],
    private readonly dir: string,
  ) {}

  /** Client URLs of every node (connect with all of them, so the client fails over). */
  get urls(): string[] {
    return this.nodes.map((n) => n.url);
  }

  static async start(options: NatsClusterOptions = {}): Promise<NatsCluster> {
    const size = options.size ?? 3;
    // Ports are picked then released; another process may take one in between. Retry once.
    for (let attempt = 1; ; attempt++) {
      const dir = mkdtempSync(join(tmpdir(), 'tp-nats-cluster-'));
      const nodes: NatsNode[] = [];
      try {
        const clientPorts: number[] = [];
        const clusterPorts: number[] = [];
        const monitorPorts: number[] = [];
        for (let i = 0; i < size; i++) {
          clientPorts.push(await freePort());
          clusterPorts.push(await freePort());
          monitorPorts.push(await freePort());
        }
        const name = options.name ?? `tp-test-${clientPorts[0]}`;
        for (let i = 0; i < size; i++) {
          const route = { name, port: clusterPorts[i]!, routes: clusterPorts, monitorPort: monitorPorts[i]! };
          nodes.push(new NatsNode(`${name}-n${i + 1}`, clientPorts[i]!, join(dir, `n${i + 1}`), route));
        }
        await Promise.all(nodes.map((n) => n.start()));
        const cluster = new NatsCluster(name, nodes, dir);
        await cluster.waitForMetaLeader(options.leaderTimeoutMs ?? 20_000);
        await cluster.waitForPeers(options.leaderTimeoutMs ?? 20_000);
        return cluster;
      } catch (err) {
        await Promise.all(nodes.map((n) => n.kill()));
        rmSync(dir, { recursive: true, force: true });
        if (attempt >= 2) throw err;
      }
    }
  }

  /** Waits until JetStream answers (`$JS.API.INFO`), i.e. the meta group has elected a leader. */
  async waitForMetaLeader(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    const running = this.nodes.filter((n) => n.running).map((n) => n.url);
    const nc = await connect({ servers: running, timeout: 2_000 });
    try {
      const jsm = await nc.jetstreamManager({ timeout: 2_000, checkAPI: false });
      while (Date.now() < deadline) {
        try {
          await jsm.getAccountInfo();
          return;
        } catch (err) {
          last = err;
          await sleep(200);
        }
      }
    } finally {
      await nc.close();
    }
    throw new Error(`no JetStream meta leader within ${timeoutMs} ms: ${String(last)}`);
  }

  /**
   * Waits until the meta group's leader reports every running node as a current peer. A meta
   * leader alone is not enough: until each peer has reported in, the leader places no stream with
   * R replicas ("no suitable peers for placement"), and under load that takes longer.
   */
  async waitForPeers(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let seen = 'no report';
    while (Date.now() < deadline) {
      const running = this.nodes.filter((n) => n.running);
      const reports = await Promise.all(running.map((n) => n.jsz()));
      const leaderReport = reports.find((r, i) => r?.meta_cluster?.leader === running[i]!.name);
      const replicas = leaderReport?.meta_cluster?.replicas ?? [];
      seen = JSON.stringify(leaderReport?.meta_cluster ?? reports.find((r) => r?.meta_cluster !== undefined)?.meta_cluster ?? null);
      if (leaderReport !== undefined && replicas.length >= running.length - 1 && replicas.every((r) => r.current && r.offline !== true)) {
        const names = new Set(replicas.map((r) => r.name));
        if (running.every((n) => n.name === leaderReport.meta_cluster!.leader || names.has(n.name))) return;
      }
      await sleep(100);
    }
    throw new Error(`the JetStream meta group did not report every peer current within ${timeoutMs} ms: ${seen}`);
  }

  /** A client connection that knows every node (and fails over between them). */
  async connect(): Promise<NatsConnection> {
    return connect({ servers: this.urls, maxReconnectAttempts: -1, reconnectTimeWait: 100, timeout: 2_000 });
  }

  async close(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill('SIGTERM')));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
