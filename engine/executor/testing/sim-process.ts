import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

import { ErrorCode, TpError } from '../../errors.js';
import { createGenesis, type Genesis } from '../../sim/genesis.js';
import type { SimEndpoints } from '../../sim/simulator.js';
import { SUBMITTER_SIM_MARKET, submitterSimFlags } from './submitter-sim.js';

/**
 * The submitters' simulator (submitter-sim.ts: same seed, market and no generated flow) as its own
 * process: the built `tidepool sim` CLI, so its slot work runs on another event loop than the code
 * under test. What the tests knew from the in-process `sim` object comes from its servers (JSON-RPC,
 * block engine) and from the genesis of the seed, which is the same in both processes (keys, pool
 * and token account addresses are derived from the seed).
 */

export interface SimProcess {
  endpoints: Pick<SimEndpoints, 'rpc' | 'ws' | 'stream' | 'http'>;
  /** The chain at slot 0 of the seed: the traders' keypairs and token accounts, the pools. */
  genesis: Genesis;
  pid: number;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  close(graceMs?: number): Promise<void>;
}

export interface SpawnSimulatorOptions {
  slotMs: number;
  /** The CLI entry point; by default the built one next to this module (dist/ or dist-bench/), else dist/. */
  bin?: string;
  /** How long to wait for its endpoints (default 30 s). */
  readyTimeoutMs?: number;
}

/** `engine/cli/main.js` of the build this module belongs to; from the sources (vitest), the dist/ build. */
export function builtCliPath(): string {
  const sibling = resolve(import.meta.dirname, '../../cli/main.js');
  return existsSync(sibling) ? sibling : resolve(import.meta.dirname, '../../../dist/engine/cli/main.js');
}

const ENDPOINT_LINES = {
  rpc: /Solana JSON-RPC\s+(http:\/\/\S+)/,
  ws: /Solana PubSub\s+(ws:\/\/\S+)/,
  stream: /ShredStream gRPC\s+(\S+)/,
  http: /quote API\s+(http:\/\/\S+)\/quote/,
} as const;

/** Starts `tidepool sim` with the submitters' chain and resolves once it printed its endpoints. */
export async function spawnSimulator(options: SpawnSimulatorOptions): Promise<SimProcess> {
  const bin = options.bin ?? builtCliPath();
  if (!existsSync(bin)) throw new TpError(ErrorCode.Unavailable, `the simulator CLI ${bin} is not built (npm run build)`);
  const args = Object.entries(submitterSimFlags(options.slotMs)).flatMap(([k, v]) => [`--${k}`, v]);
  const child = spawn(process.execPath, [bin, 'sim', ...args], { env: { ...process.env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  try {
    const endpoints = await readyEndpoints(child, options.readyTimeoutMs ?? 30_000);
    return {
      endpoints,
      genesis: createGenesis({ ...SUBMITTER_SIM_MARKET }),
      pid: child.pid!,
      close: (graceMs = 5_000) => stop(child, exited, graceMs),
    };
  } catch (err) {
    await stop(child, exited, 0);
    throw err;
  }
}

function readyEndpoints(child: ChildProcess, timeoutMs: number): Promise<SimProcess['endpoints']> {
  return new Promise((resolvePromise, reject) => {
    let stderr = '';
    const fail = (why: string): void => {
      cleanup();
      reject(new TpError(ErrorCode.Unavailable, `tidepool sim ${why}: ${stderr.slice(-2_000)}`));
    };
    const timer = setTimeout(() => fail(`printed no endpoints within ${timeoutMs} ms`), timeoutMs);
    const onExit = (code: number | null, signal: string | null): void => fail(`exited (${code ?? signal}) before it was ready`);
    const onData = (chunk: Buffer): void => {
      stderr += chunk.toString();
      const found = Object.entries(ENDPOINT_LINES).map(([k, re]) => [k, re.exec(stderr)?.[1]] as const);
      if (found.some(([, v]) => v === undefined)) return;
      cleanup();
      resolvePromise(Object.fromEntries(found) as SimProcess['endpoints']);
    };
    function cleanup(): void {
      clearTimeout(timer);
      child.off('exit', onExit);
      child.stderr!.off('data', onData);
      // Keep draining its log so that a full pipe never blocks the simulator.
      child.stderr!.resume();
    }
    child.once('exit', onExit);
    child.stderr!.on('data', onData);
  });
}

async function stop(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(graceMs === 0 ? 'SIGKILL' : 'SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
