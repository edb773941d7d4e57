/**
 * Test helpers of engine/quote: a manual simulator's chain as the source of real decoded pools, and
 * a pool cache filled from it under a fake clock.
 */
import { PoolCache } from '../cache/index.js';
import { loadConfig } from '../config/index.js';
import { createDecoderRegistry, type DecodedPool } from '../dex/index.js';
import { createLogger } from '../obs/logger.js';
import type { PoolLoadResult, PoolLoader } from '../pools/types.js';
import { RpcClient, type MultipleAccountsResult } from '../rpc/rpc-client.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type Simulator } from '../sim/simulator.js';
import type { SimPoolView } from '../sim/market-view.js';

/** A manual simulator (nothing bound, slots advance only by hand) with SOL, USDC and 2 more tokens. */
export function manualSimulator(seed = 7): Simulator {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: String(seed), 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'http-port': '0', tokens: '2', 'pools-per-kind': '2' },
  }).values;
  return createSimulator(config, { manual: true, logger: createLogger({ name: 'quote-test', level: 'silent' }) });
}

function reservesOf(pool: DecodedPool): [bigint, bigint] {
  return 'reserveA' in pool && typeof pool.reserveA === 'bigint' ? [pool.reserveA, pool.reserveB] : [0n, 0n];
}

/** Stores `view` in `cache` at `slot` (the decoded pool and its context, as the scanner would). */
export function storePool(cache: PoolCache, view: SimPoolView, slot: bigint): void {
  const [reserveA, reserveB] = reservesOf(view.pool);
  cache.upsert({
    address: view.address,
    dex: view.dex,
    tokenA: view.pool.tokenA,
    tokenB: view.pool.tokenB,
    reserveA,
    reserveB,
    slot,
    pool: view.pool,
    context: view.ctx,
  });
}

/**
 * A PoolLoader over the simulator's real JSON-RPC (getMultipleAccounts, base64; the simulator's
 * injected RPC errors and latency apply), decoding pool accounts with the engine's decoders. A test
 * stand-in until engine/pools/rpc-pool-loader.ts lands: it reads only the pool accounts (slot,
 * existence, owner, faults), decodes AMM pools from their bytes, and takes the decoded state and
 * tick / bin arrays of concentrated and DLMM pools from the simulator's market view.
 */
export class SimRpcPoolLoader implements PoolLoader {
  /** load() calls made. */
  calls = 0;
  private readonly client: RpcClient;
  private readonly registry = createDecoderRegistry();

  constructor(
    rpcUrl: string,
    private readonly sim: Simulator,
    timeoutMs = 10_000,
  ) {
    this.client = new RpcClient({ endpoints: [rpcUrl], timeoutMs });
  }

  async load(addresses: readonly string[]): Promise<PoolLoadResult[]> {
    this.calls++;
    let answer: MultipleAccountsResult;
    try {
      answer = await this.client.getMultipleAccounts(addresses);
    } catch (err) {
      return addresses.map((address) => ({ ok: false, error: { address, reason: 'rpc', message: (err as Error).message } }));
    }
    return addresses.map((address, i): PoolLoadResult => {
      const account = answer.accounts[i];
      if (account === null || account === undefined) return { ok: false, error: { address, reason: 'missing', message: `no account ${address}` } };
      let decoded;
      try {
        decoded = this.registry.decodeAccount(account.owner, account.data, address);
      } catch (err) {
        return { ok: false, error: { address, reason: 'decode', message: (err as Error).message } };
      }
      if (decoded.kind !== 'pool') return { ok: false, error: { address, reason: 'decode', message: `${address} is not a pool` } };
      if (decoded.pool.dex === 'dexa_amm') {
        return { ok: true, value: { address, dex: decoded.dex, pool: decoded.pool, context: undefined, slot: answer.slot, data: account.data } };
      }
      // Not read here: the Raydium AmmConfig fee and the tick / bin arrays. The simulator's view
      // holds the same state the account was read from.
      const view = this.sim.chain.pool(address);
      if (view === undefined) return { ok: false, error: { address, reason: 'missing', message: `no pool ${address}` } };
      return { ok: true, value: { address, dex: decoded.dex, pool: view.pool, context: view.ctx, slot: answer.slot, data: account.data } };
    });
  }
}

/** A fake clock: read with `now()`, move with `advance(ms)`. */
export class FakeClock {
  constructor(public t = 1_700_000_000_000) {}
  readonly now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}
