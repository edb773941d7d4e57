import { createLogger, type Logger } from '../obs/index.js';
import { SimChain } from './chain.js';
import { FaultInjector } from './faults.js';
import { createSimHttpServer, mountLookupTableAdmin, type SimHttpServer } from './http/index.js';
import { mountMarketAdmin } from './http/market-admin.js';
import { mountRpcNodeAdmin } from './http/rpc-node-admin.js';
import { mountPriceApi } from './price-api/index.js';
import { mountQuoteApi } from './quote-api/index.js';
import { JsonRpcHttpServer, JsonRpcWsServer } from './rpc/index.js';
import { RpcNodes } from './rpc-nodes.js';
import type { SimConfig } from './sim-config.js';
import { ShredstreamServer } from './stream/index.js';
import { GeyserServer } from './stream/geyser-server.js';
import { ErrorCode, TpError } from '../errors.js';

/**
 * `tidepool sim` in one object: the seeded chain, the fault injector configured from the
 * `sim.fault*` settings, and the four servers bound to the configured host and ports (Solana
 * JSON-RPC over HTTP and WebSocket, ShredStream gRPC, and the HTTP server carrying the block
 * engine, the fault admin, the lookup table admin and the /quote API). Nothing listens or ticks
 * until start().
 */

export interface SimEndpoints {
  /** Solana JSON-RPC over HTTP, `http://host:port`. */
  rpc: string;
  /** Solana PubSub over WebSocket, `ws://host:port`. */
  ws: string;
  /** ShredStream gRPC, `host:port` (plaintext). */
  stream: string;
  /** Yellowstone gRPC (Geyser) account stream, `host:port` (plaintext). */
  geyser: string;
  /** Block engine, fault admin and /quote API, `http://host:port`. */
  http: string;
}

export interface SimServers {
  rpc: JsonRpcHttpServer;
  ws: JsonRpcWsServer;
  stream: ShredstreamServer;
  geyser: GeyserServer;
  http: SimHttpServer;
}

export interface Simulator {
  readonly chain: SimChain;
  readonly faults: FaultInjector;
  readonly servers: SimServers;
  /** More JSON-RPC + PubSub nodes over the same chain, each with its own faults and slot lag (rpc-nodes.ts). */
  readonly rpcNodes: RpcNodes;
  /** Binds every server, then starts the slot clock. Resolves with the bound endpoints. */
  start(): Promise<SimEndpoints>;
  /** Stops the clock and closes every server (connections in flight get their grace period). Idempotent. */
  close(): Promise<void>;
}

export interface SimulatorOptions {
  logger?: Logger;
  /** Slots advance only through `chain.advanceSlot()` (tests). */
  manual?: boolean;
}

/** The fault injector as the `sim.fault*` settings start it. */
export function faultsFromConfig(config: SimConfig): FaultInjector {
  const faults = new FaultInjector(config['sim.seed']);
  faults.stream.stall = config['sim.faultStall'];
  faults.stream.garbageRate = config['sim.faultGarbageRate'];
  faults.stream.truncateRate = config['sim.faultTruncateRate'];
  if (config['sim.faultRpcErrorRate'] > 0 || config['sim.faultRpcLatency'] > 0) {
    faults.setRpcFault('*', { errorRate: config['sim.faultRpcErrorRate'], latencyMs: config['sim.faultRpcLatency'] });
  }
  faults.rejectBundles = config['sim.faultRejectBundles'];
  return faults;
}

export function createSimulator(config: SimConfig, options: SimulatorOptions = {}): Simulator {
  const log = options.logger ?? createLogger({ name: 'sim' });
  const host = config['sim.host'];
  const chain = new SimChain({
    seed: config['sim.seed'],
    slotMs: config['sim.slotMs'],
    txRate: config['sim.txRate'],
    poolShare: config['sim.poolShare'],
    lookupSwapShare: config['sim.lookupSwapShare'],
    tokens: config['sim.tokens'],
    poolsPerKind: config['sim.poolsPerKind'],
    txsPerEntry: config['sim.txsPerEntry'],
    slotsPerEpoch: config['sim.slotsPerEpoch'],
    faucetCapSol: config['sim.faucetCapSol'],
    manual: options.manual ?? false,
    logger: log,
  });
  const faults = faultsFromConfig(config);
  const rpc = new JsonRpcHttpServer({ backend: chain, faults, host, port: config['sim.rpcPort'], logger: log });
  const ws = new JsonRpcWsServer({ backend: chain, faults, host, port: config['sim.wsPort'], logger: log });
  const stream = new ShredstreamServer({ backend: chain, faults, host, port: config['sim.streamPort'], logger: log });
  const geyser = new GeyserServer({ backend: chain, host, port: config['sim.geyserPort'], logger: log });
  const { server: http }: { server: SimHttpServer } = createSimHttpServer({ backend: chain, faults, host, port: config['sim.httpPort'], logger: log });
  mountQuoteApi(http, { market: chain, faults, logger: log });
  mountPriceApi(http, { market: chain });
  mountLookupTableAdmin(http, { chain, logger: log });
  mountMarketAdmin(http, { chain, logger: log });
  const rpcNodes = new RpcNodes(chain, { host, logger: log });
  mountRpcNodeAdmin(http, { nodes: rpcNodes, logger: log });

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      chain.stop();
      const results = await Promise.allSettled([rpc.close(), ws.close(), stream.close(), geyser.close(), http.close(), rpcNodes.close()]);
      for (const r of results) if (r.status === 'rejected') log.error({ err: r.reason }, 'simulator server failed to close');
    })();
    return closing;
  };

  return {
    chain,
    faults,
    servers: { rpc, ws, stream, geyser, http },
    rpcNodes,
    async start(): Promise<SimEndpoints> {
      if (closing !== undefined) throw new TpError(ErrorCode.Unavailable, 'the simulator was closed');
      try {
        const [rpcAddress, wsAddress, streamPort, geyserPort] = await Promise.all([rpc.start(), ws.start(), stream.start(), geyser.start(), http.start()]);
        const streamHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
        const endpoints: SimEndpoints = { rpc: rpcAddress.url, ws: wsAddress.url, stream: `${streamHost}:${streamPort}`, geyser: `${streamHost}:${geyserPort}`, http: http.url };
        chain.start();
        log.info({ ...endpoints, seed: config['sim.seed'], slotMs: config['sim.slotMs'], txRate: config['sim.txRate'] }, 'simulator started');
        return endpoints;
      } catch (err) {
        await close();
        throw err;
      }
    },
    close,
  };
}
