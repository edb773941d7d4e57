/**
 * Test support for the one-process engine: a manual simulator (slots advance by hand, no generated
 * flow unless asked) with the engine pointed at it, every port bound to 0, parse workers from dist/.
 */
import { resolve } from 'node:path';

import { ErrorCode, TpError } from '../errors.js';
import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from '../sim/simulator.js';
import type { PoolStateUpdateEvent } from '../scanner/pool-state-event.js';
import { createEngine, type Engine, type EngineEndpoints } from './engine-app.js';
import { engineSchema } from './engine-config.js';
import { scannerServiceSchema } from './scanner-app.js';
import { LOCAL_NATS_URL } from '../bus/testing/local-nats.js';
import type { LoadedConfig } from '../config/index.js';

export const PARSE_WORKER = resolve(import.meta.dirname, '../../dist/engine/scanner/parse-worker.js');
export const RPC_WORKER = resolve(import.meta.dirname, '../../dist/engine/rpc/rpc-worker.js');

export interface EngineUnderSim {
  sim: Simulator;
  simEndpoints: SimEndpoints;
  engine: Engine;
  endpoints: EngineEndpoints;
  /** Every event the scanner published, in order. */
  events: PoolStateUpdateEvent[];
  close(): Promise<void>;
}

export async function startEngineUnderSim(options: { sim?: Record<string, string>; engine?: Record<string, string>; pools?: (sim: Simulator) => string[] } = {}): Promise<EngineUnderSim> {
  const simConfig = loadConfig(simSchema, {
    env: {},
    flags: { seed: '11', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '2', ...options.sim },
  }).values;
  const logger = createLogger({ name: 'engine-test', level: 'silent' });
  const sim = createSimulator(simConfig, { manual: true, logger });
  const simEndpoints = await sim.start();
  sim.chain.advanceSlot(1);
  const [host, port] = [simEndpoints.stream.slice(0, simEndpoints.stream.lastIndexOf(':')), simEndpoints.stream.slice(simEndpoints.stream.lastIndexOf(':') + 1)];
  const loaded = loadConfig(engineSchema, {
    env: {},
    flags: {
      'blockstream-host': host,
      'blockstream-port': port,
      'rpc-endpoints': simEndpoints.rpc,
      'geyser-url': `http://${simEndpoints.geyser}`,
      port: '0',
      'metrics-port': '0',
      'grpc-port': '0',
      'health-port': '0',
      'scanner-metrics-port': '0',
      'parse-workers': '1',
      'rate-limit-rps': '100000',
      ...options.engine,
    },
  });
  const pools = options.pools?.(sim) ?? sim.chain.pools().map((p) => p.address);
  const engine = createEngine(loaded, { logger, pools, parseWorkerFilename: PARSE_WORKER, rpcWorkerFilename: RPC_WORKER });
  const events: PoolStateUpdateEvent[] = [];
  engine.scanner.onPublished((event) => events.push(event));
  const endpoints = await engine.start();
  return {
    sim,
    simEndpoints,
    engine,
    endpoints,
    events,
    async close() {
      await engine.close();
      await sim.close();
    },
  };
}

/** The engine on the Geyser state source (no block-entry stream) under a simulator, its stream connected. */
export async function startEngineOnGeyser(): Promise<EngineUnderSim> {
  const e = await startEngineUnderSim({ engine: { 'state-source': 'geyser', 'blockstream-port': '1' } });
  await eventually(() => (e.engine.scanner.connected ? true : undefined), 10_000, 'Geyser stream connected');
  return e;
}

/** Polls `probe` every 10 ms until it returns a value other than undefined, or throws after `ms`. */
export async function eventually<T>(probe: () => T | undefined | Promise<T | undefined>, ms = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new TpError(ErrorCode.Deadline, `timed out waiting for ${what}`, { context: { what, deadlineMs: ms } });
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * `tidepool scanner`'s settings in a split test: RPC at `rpc`, both ports on 0, one parse worker,
 * publishing to `stream` on the local NATS (`bus` elsewhere); `source` adds where the transactions
 * come from (`blockstreamFlags`, or the Geyser settings).
 */
export function splitScannerConfig(options: { rpc: string; stream: string; bus?: string; source: Record<string, string> }): LoadedConfig<typeof scannerServiceSchema> {
  return loadConfig(scannerServiceSchema, {
    env: {},
    flags: {
      ...options.source,
      'rpc-endpoints': options.rpc,
      'health-port': '0',
      'metrics-port': '0',
      'parse-workers': '1',
      'bus-servers': options.bus ?? LOCAL_NATS_URL,
      'bus-stream-name': options.stream,
    },
  });
}

/** The block-entry stream flags of a `host:port` (the simulator's ShredStream endpoint). */
export function blockstreamFlags(stream: string): Record<string, string> {
  const at = stream.lastIndexOf(':');
  return { 'blockstream-host': stream.slice(0, at), 'blockstream-port': stream.slice(at + 1) };
}
