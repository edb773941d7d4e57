/**
 * The simulator on its own thread: `npm start` runs the chain beside the engine as a real node
 * would run beside it, so block production, transaction signing and the chain's RPC serving do not
 * share the engine's event loop (docs/architecture.md §1: the main thread owns the cache and the sockets).
 * The servers are the same; only the thread differs.
 */
import { Worker } from 'node:worker_threads';

import type { Dex } from '../dex/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { SimConfig } from './sim-config.js';
import type { SimEndpoints } from './simulator.js';

export type SimThreadRequest =
  | { type: 'close' }
  /** Send a swap of `amount` (exact in) on `pool`; answered by swap-emitted or swap-refused. */
  | { type: 'swap'; id: number; pool: string; aToB: boolean; amount: string };

export type SimThreadReply =
  | { type: 'started'; endpoints: SimEndpoints; pools: { address: string; dex: Dex }[]; reserves: string[] }
  | { type: 'failed'; message: string }
  | { type: 'closed' }
  /**
   * Times of the probe on the chain thread (process.hrtime.bigint()): `appliedNs` the chain applied
   * the swap (its account writes announced), `handedNs` the servers' listeners have had them (the
   * Geyser server wrote them to its streams), `emittedNs` the entry batch holding the swap left the
   * chain, `flushedNs` the next check phase of the chain thread's event loop (the sockets written
   * during the turn are flushed by then).
   */
  | { type: 'swap-emitted'; id: number; signature: string; emittedNs: string; appliedNs: string; handedNs: string; flushedNs: string }
  | { type: 'swap-refused'; id: number; message: string };

/** A probe swap's signature and its times on the chain thread (see swap-emitted). */
export interface ProbeTimes {
  signature: string;
  appliedNs: bigint;
  handedNs: bigint;
  emittedNs: bigint;
  flushedNs: bigint;
}

export interface SimThread {
  endpoints: SimEndpoints;
  pools: { address: string; dex: Dex }[];
  /** The Kamino Lending reserves of the simulated market (flash loans), one per token. */
  reserves: string[];
  worker: Worker;
  /** Sends a probe swap; resolves with its signature and times, or rejects when refused. */
  swap(pool: string, aToB: boolean, amount: bigint): Promise<ProbeTimes>;
  close(): Promise<void>;
}

export function startSimulatorThread(config: SimConfig, options: { logLevel?: string } = {}): Promise<SimThread> {
  const worker = new Worker(new URL('./sim-worker.js', import.meta.url), { workerData: { config, logLevel: options.logLevel ?? 'info' } });
  const pending = new Map<number, { resolve: (v: ProbeTimes) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let closed: Promise<void> | undefined;
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (m: SimThreadReply) => {
      switch (m.type) {
        case 'started':
          worker.off('error', reject);
          worker.on('error', () => {}); // reported by close() / exit
          resolve({
            endpoints: m.endpoints,
            pools: m.pools,
            reserves: m.reserves,
            worker,
            swap(pool, aToB, amount) {
              const id = nextId++;
              return new Promise((res, rej) => {
                pending.set(id, { resolve: res, reject: rej });
                worker.postMessage({ type: 'swap', id, pool, aToB, amount: amount.toString() } satisfies SimThreadRequest);
              });
            },
            close() {
              closed ??= new Promise<void>((done) => {
                worker.once('exit', () => done());
                worker.postMessage({ type: 'close' } satisfies SimThreadRequest);
              });
              return closed;
            },
          });
          break;
        case 'failed':
          void worker.terminate();
          reject(new TpError(ErrorCode.Internal, `simulator thread failed to start: ${m.message}`));
          break;
        case 'swap-emitted':
          pending.get(m.id)?.resolve({ signature: m.signature, appliedNs: BigInt(m.appliedNs), handedNs: BigInt(m.handedNs), emittedNs: BigInt(m.emittedNs), flushedNs: BigInt(m.flushedNs) });
          pending.delete(m.id);
          break;
        case 'swap-refused':
          pending.get(m.id)?.reject(new TpError(ErrorCode.RouteInvalid, m.message));
          pending.delete(m.id);
          break;
        case 'closed':
          break;
      }
    });
  });
}
