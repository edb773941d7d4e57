/**
 * What the HTTP bench suites share (`quote`, `rpc-proxy`): the native load generators and the
 * server processes they load.
 *
 * - max throughput: wrk (Debian `wrk`), closed loop: every connection always has a request
 *   outstanding, which is what a max-throughput figure wants.
 * - latency at a fixed rate: bench/loadgen/openloop.c, compiled here with gcc: open loop, each
 *   latency counted from the request's due time, so stalls are not hidden (loadgen/openloop.c says
 *   why the packaged tools do not do this). Its per-request latencies and its own lateness go into
 *   HDR histograms (bench/latency.ts).
 * - servers: each in its own Node process (bench/servers/*), started the same way, reporting one
 *   JSON ready line on stdout and stopped by closing their stdin, so no server shares an event
 *   loop with a generator or with the suite.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { NODE_ENV, NODE_FLAGS } from '../engine/cli/runtime-flags.js';
import type { LatencyRecorder } from './latency.js';

const here = dirname(fileURLToPath(import.meta.url)); // dist-bench/bench
const root = resolve(here, '..', '..');
const serversDir = resolve(here, 'servers');
const openloopSource = join(root, 'bench', 'loadgen', 'openloop.c');
const openloopBinary = join(root, 'dist-bench', 'bench', 'loadgen', 'openloop');

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const file = join(dir, name);
    if (dir !== '' && existsSync(file)) return file;
  }
  return undefined;
}

/** wrk and a C compiler, or a clear message naming the Debian packages. */
export function requireTools(suite: string): { wrk: string; cc: string } {
  const wrk = onPath('wrk');
  const cc = onPath('gcc') ?? onPath('cc');
  const missing = [wrk === undefined ? 'wrk' : '', cc === undefined ? 'gcc' : ''].filter((m) => m !== '');
  if (missing.length > 0) {
    const message =
      `the ${suite} suite needs ${missing.join(' and ')} (Debian packages: ${missing.join(' ')}): ` +
      `apt-get install -y --no-install-recommends ${missing.join(' ')}`;
    process.stderr.write(`bench ${suite}: ${message}\n`);
    throw new Error(message);
  }
  return { wrk: wrk!, cc: cc! };
}

export function run(file: string, args: string[], timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err !== null && typeof err.code !== 'number') {
        reject(new Error(`${file} ${args.join(' ')}: ${err.message}\n${stderr}`));
        return;
      }
      resolvePromise({ code: err === null ? 0 : (err.code as number), stdout, stderr });
    });
  });
}

/** Compiles bench/loadgen/openloop.c into dist-bench/bench/loadgen unless the binary is newer. */
export async function buildOpenloop(cc: string): Promise<string> {
  if (existsSync(openloopBinary) && statSync(openloopBinary).mtimeMs >= statSync(openloopSource).mtimeMs) return openloopBinary;
  mkdirSync(dirname(openloopBinary), { recursive: true });
  const r = await run(cc, ['-O2', '-Wall', '-o', openloopBinary, openloopSource], 60_000);
  if (r.code !== 0) throw new Error(`compiling ${openloopSource} failed:\n${r.stderr}`);
  return openloopBinary;
}

export interface ServerProcess<Ready = Record<string, unknown>> {
  name: string;
  child: ChildProcess;
  ready: { port: number; pid: number; memory?: { heapUsedMB: number; rssMB: number; youngMB?: number } } & Ready;
}

/** Starts `node --expose-gc bench/servers/<script> ...args` and waits for its JSON ready line. */
export function startServer<Ready = Record<string, unknown>>(name: string, script: string, args: string[], timeoutMs: number): Promise<ServerProcess<Ready>> {
  return new Promise((resolvePromise, reject) => {
    // Servers run Node as tidepool's processes do (engine/cli/runtime-flags.ts), baselines alike.
    const child = spawn(process.execPath, ['--expose-gc', ...NODE_FLAGS, join(serversDir, script), ...args], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, ...NODE_ENV },
    });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} server not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} server exited (${code ?? signal}) before it was ready`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      try {
        resolvePromise({ name, child, ready: JSON.parse(out.slice(0, nl)) as ServerProcess<Ready>['ready'] });
      } catch (err) {
        child.kill('SIGKILL');
        reject(err as Error);
      }
    });
  });
}

/** Closes the server's stdin (it then exits); SIGKILL after 5 s. */
export function stopServer(server: ServerProcess<unknown>): Promise<void> {
  const child = server.child;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolvePromise) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolvePromise();
    });
    child.stdin!.end();
  });
}

/** CPU time (user + system) a process has used so far, in µs (/proc/<pid>/stat, Linux; 10 ms resolution). */
export function cpuTimeUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name.
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
}

/** USER_HZ: Linux reports process times in 1/100 s. */
const CLOCK_TICKS_PER_SECOND = 100;

export function memoryOf(pid: number): { rssMB: number; hwmMB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMB: kb('VmRSS') / 1024, hwmMB: kb('VmHWM') / 1024 };
}

/**
 * CPU seconds (user + system) process `pid` has used so far, from /proc/<pid>/stat (clock ticks of
 * 1/100 s, Linux's USER_HZ): the cost of a server's work, which other processes on a busy box
 * do not inflate the way they inflate its latency.
 */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) in parentheses: utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface WrkOptions {
  threads: number;
  connections: number;
  seconds: number;
  /** The Lua script. */
  script: string;
  url: string;
  /** Arguments after `--`, given to the script's init(). */
  scriptArgs?: string[];
  /** Non-2xx answers are expected (a flood a rate limit refuses): counted, not a failure. */
  allowNon2xx?: boolean;
}

/** One closed-loop wrk run; fails on any non-2xx answer (unless allowed) or socket error. */
export async function runWrk(tool: string, o: WrkOptions): Promise<{ rps: number; requests: number; non2xx: number }> {
  const args = [`-t${o.threads}`, `-c${o.connections}`, `-d${o.seconds}s`, '-s', o.script, o.url, ...(o.scriptArgs === undefined ? [] : ['--', ...o.scriptArgs])];
  const r = await run(tool, args, (o.seconds + 30) * 1000);
  if (r.code !== 0) throw new Error(`wrk exited with ${r.code}:\n${r.stdout}${r.stderr}`);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(r.stdout)?.[1]);
  const requests = Number(/(\d+) requests in /.exec(r.stdout)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(r.stdout)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(r.stdout);
  if (!Number.isFinite(rps) || !Number.isFinite(requests)) throw new Error(`cannot read wrk's output:\n${r.stdout}`);
  if (non2xx > 0 && o.allowNon2xx !== true) throw new Error(`wrk saw ${non2xx} non-2xx responses of ${requests} at ${o.url}:\n${r.stdout}`);
  if (socket !== null && socket.slice(1).some((n) => Number(n) > 0)) throw new Error(`wrk saw socket errors at ${o.url}:\n${r.stdout}`);
  return { rps, requests, non2xx };
}

export interface OpenloopOptions {
  port: number;
  rate: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  /** File of request targets, one a line. */
  paths: string;
  /** Where the generator writes its per-request records. */
  out: string;
  /** A file whose bytes are POSTed to every target (instead of GET). */
  body?: string;
  /** Open more connections, up to this many, before pipelining on a busy one (default: `connections`). */
  maxConnections?: number;
}

export interface OpenloopSummary {
  /** Connections at the end (more than asked when the run had to open more). */
  connections: number;
  scheduled: number;
  completed: number;
  recorded: number;
  incomplete: number;
  status200: number;
  statusOther: number;
  otherStatuses: Record<string, number>;
  pipelined: number;
  maxInFlight: number;
  elapsedS: number;
}

/** One open-loop run; its recorded latencies and send lags go into the two recorders. Fails on any non-200. */
export async function runOpenloop(tool: string, o: OpenloopOptions, latency: LatencyRecorder, lag: LatencyRecorder): Promise<OpenloopSummary> {
  const args = ['-p', String(o.port), '-r', String(o.rate), '-d', String(o.seconds), '-w', String(o.warmupSeconds)];
  args.push('-c', String(o.connections), '-f', o.paths, '-o', o.out, '-t', '10');
  if (o.body !== undefined) args.push('-b', o.body);
  if (o.maxConnections !== undefined) args.push('-m', String(o.maxConnections));
  const r = await run(tool, args, (o.seconds + o.warmupSeconds + 40) * 1000);
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (!line.startsWith('{')) throw new Error(`openloop failed (exit ${r.code}) on port ${o.port}:\n${r.stdout}${r.stderr}`);
  const summary = JSON.parse(line) as OpenloopSummary;
  if (summary.statusOther > 0 || r.code !== 0) {
    throw new Error(
      `openloop on port ${o.port}: ${summary.statusOther} non-200 responses ${JSON.stringify(summary.otherStatuses)} ` +
        `of ${summary.completed} (exit ${r.code})\n${r.stderr}`,
    );
  }
  const bytes = readFileSync(o.out);
  const pairs = new BigInt64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8);
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    latency.recordNs(pairs[i]!);
    lag.recordNs(pairs[i + 1]!);
  }
  return summary;
}

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** A pause between runs, so one run's tail (a backlog being dropped) does not fall on the next. */
export const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 500));
