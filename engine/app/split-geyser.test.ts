/**
 * The split deployment on the Geyser state source (issue 28): `tidepool scanner`'s app on
 * scanner.stateSource geyser against the simulator's Yellowstone gRPC endpoint, publishing pool
 * updates to a POOL_UPDATES stream of its own (random name and subjects, deleted after), and
 * `tidepool quote-service`'s app consuming them. The scanner's block-entry stream points at a closed
 * port, and the quote service neither refreshes nor falls back in the test's time (refresh and
 * staleness an hour): a cache quote that moves after a swap on the simulator can only have come
 * through the account stream and the bus. Faults of the Geyser server (every stream dropped, slots
 * skipped) must not stop the served quote from converging on the chain's.
 */
import { existsSync } from 'node:fs';

import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LOCAL_NATS_URL, connectLocal, deleteStreams, uniqueName, uniqueSubjectRoot, waitFor } from '../bus/testing/local-nats.js';
import { loadConfig } from '../config/loader.js';
import { SwapMode, quoteSwap } from '../dex/index.js';
import { createLogger } from '../obs/logger.js';
import { PoolContextReader } from '../quote/pool-context-reader.js';
import { defaultQuoteConfig } from '../quote-service/quote-config.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from '../sim/simulator.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { createQuoteApp, type QuoteApp } from './quote-app.js';
import { createScannerApp, type ScannerApp } from './scanner-app.js';
import { PARSE_WORKER, RPC_WORKER, eventually, splitScannerConfig } from './testing.js';

const built = existsSync(PARSE_WORKER);
const logger = createLogger({ name: 'split-geyser-test', level: process.env.TEST_LOG ?? 'silent' });
const ONE_SOL = 1_000_000_000n;

interface QuoteBody {
  outputAmount: string;
  pool: string;
  source: string;
}

describe.skipIf(!built)('split scanner on the Geyser state source and quote service over NATS', () => {
  let sim: Simulator;
  let endpoints: SimEndpoints;
  let admin: NatsConnection;
  let scanner: ScannerApp;
  let service: QuoteApp;
  let quoteBase: string;
  const stream = uniqueName('POOL_UPDATES');
  const root = uniqueSubjectRoot();

  async function quote(): Promise<QuoteBody> {
    const res = await fetch(`${quoteBase}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${ONE_SOL}`);
    return (await res.json()) as QuoteBody;
  }

  /** The chain's own quote of 1 SOL → USDC on `pool`. */
  function chainQuote(pool: string): string {
    const view = sim.chain.pool(pool)!;
    const expected = quoteSwap(view.pool, { aToB: view.pool.tokenA === WSOL_MINT, mode: SwapMode.ExactIn, amount: ONE_SOL }, view.ctx);
    if (!expected.ok) throw new Error(`the chain refuses the quote: ${expected.reason}`);
    return expected.amountOut.toString();
  }

  /** USDC in on `pool` (SOL dearer there, so it stays the best pool for SOL → USDC); closes the slot. */
  function swapUsdcIn(pool: string, amount: bigint): void {
    const chain = sim.chain;
    const info = chain.poolInfo(pool)!;
    chain.sendTransaction(swapTransaction(chain, trader(chain), info, { aToB: info.tokenA.mint === USDC_MINT, exactIn: true, amount, threshold: 0n }));
    chain.advanceSlot(1);
  }

  /** The quote service's cache quote on `pool`, once it equals the chain's. */
  async function servedMatchesChain(pool: string, what: string): Promise<QuoteBody> {
    return eventually(async () => {
      const q = await quote();
      return q.source === 'cache' && q.pool === pool && q.outputAmount === chainQuote(pool) ? q : undefined;
    }, 15_000, what);
  }

  beforeAll(async () => {
    admin = await connectLocal();
    const simConfig = loadConfig(simSchema, { env: {}, flags: { seed: '13', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '2' } }).values;
    sim = createSimulator(simConfig, { manual: true, logger });
    endpoints = await sim.start();
    sim.chain.advanceSlot(1);
    // No block entries (a closed port): only the account stream can bring a swap's state.
    const loaded = splitScannerConfig({ rpc: endpoints.rpc, stream, source: { 'state-source': 'geyser', 'geyser-url': `http://${endpoints.geyser}`, 'blockstream-port': '1' } });
    scanner = await createScannerApp(loaded, { logger, pools: sim.chain.pools().map((p) => p.address), parseWorkerFilename: PARSE_WORKER, rpcWorkerFilename: RPC_WORKER, subjectRoot: root });
    service = await createQuoteApp(
      defaultQuoteConfig({
        port: 0,
        'metrics.port': 0,
        'grpc.port': 0,
        rateLimitRps: 100_000,
        // RPC for the tick / bin arrays of concentrated pools only: no refresh and no stale
        // fallback within the test, so a moved cache quote came over the bus.
        'rpc.endpoints': [endpoints.rpc],
        refreshSeconds: 3_600,
        'cache.stalenessThreshold': 3_600_000,
        'bus.servers': [LOCAL_NATS_URL],
        'bus.streamName': stream,
        'bus.consumerName': 'quote-service',
      }),
      { logger, subjectRoot: root },
    );
    await scanner.start();
    quoteBase = (await service.start()).quote;
    await eventually(() => (scanner.service.scanner.connected && service.consumer?.consuming === true ? true : undefined), 15_000, 'Geyser stream and consumer');
    // The stream's first slot: every pool is read once and published, its accounts followed.
    sim.chain.advanceSlot(1);
    const pools = sim.chain.poolsForPair(WSOL_MINT, USDC_MINT);
    await waitFor(() => {
      for (const p of pools) {
        const entry = service.cache.get(p.address);
        if (entry?.pool === undefined) return false;
        if (PoolContextReader.needsContext(entry.dex) && entry.context === undefined) return false;
      }
      return true;
    }, 15_000, 'every SOL/USDC pool in the quote service cache');
    const followed = scanner.service.scanner.geyserStream!.followedAccounts;
    await eventually(() => (sim.servers.geyser.stats().filteredAccounts === followed ? true : undefined), 10_000, 'the filters on the server');
  });

  afterAll(async () => {
    await service?.close();
    await scanner?.close();
    await sim?.close();
    if (admin !== undefined) {
      await deleteStreams(admin, [stream]);
      await admin.close();
    }
  });

  it("serves a swap's new reserves from the account stream, through the bus", async () => {
    const before = await quote();
    expect(before.source).toBe('cache');
    const published = scanner.publisher.stats.published;
    swapUsdcIn(before.pool, 5_000_000_000n);
    const after = await servedMatchesChain(before.pool, 'the cache quote on the swapped state');
    expect(BigInt(after.outputAmount)).toBeGreaterThan(BigInt(before.outputAmount));
    expect(scanner.publisher.stats.published).toBeGreaterThan(published);
    expect(scanner.service.scanner.stats().stream.connected).toBe(true);
  });

  it('converges after the Geyser server drops every stream', async () => {
    const before = await quote();
    const connects = scanner.service.scanner.geyserStream!.stats.connects;
    expect(sim.servers.geyser.disconnectAll()).toBeGreaterThan(0);
    swapUsdcIn(before.pool, 3_000_000_000n);
    const after = await servedMatchesChain(before.pool, 'the cache quote after a reconnect');
    expect(BigInt(after.outputAmount)).toBeGreaterThan(BigInt(before.outputAmount));
    expect(scanner.service.scanner.geyserStream!.stats.connects).toBeGreaterThan(connects);
  });

  it('converges after slots the stream skipped: the gap is healed with one RPC read', async () => {
    const before = await quote();
    const geyser = scanner.service.scanner.geyserStream!;
    const [gaps, healReads] = [geyser.stats.gaps, geyser.stats.healReads];
    expect(geyser.followedAccounts).toBeLessThanOrEqual(100); // one getMultipleAccounts holds them all
    sim.servers.geyser.skipSlots(1);
    swapUsdcIn(before.pool, 2_000_000_000n); // its writes and its slot are never streamed
    sim.chain.advanceSlot(1); // the next slot's parent shows the gap
    const after = await servedMatchesChain(before.pool, 'the cache quote after a gap');
    expect(BigInt(after.outputAmount)).toBeGreaterThan(BigInt(before.outputAmount));
    expect(geyser.stats.gaps).toBe(gaps + 1);
    expect(geyser.stats.healReads).toBe(healReads + 1);
  });
});
