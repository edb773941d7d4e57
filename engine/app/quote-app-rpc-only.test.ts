import LiquidityModule from '@raydium-io/raydium-sdk-v2/lib/raydium/liquidity/liquidity.js';
import { toAmmComputePoolInfo, toBN } from '@raydium-io/raydium-sdk-v2';
import { Connection } from '@solana/web3.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/index.js';
import { Dex, RAYDIUM_AMM_V4_PROGRAM_ID, SwapMode, quoteSwap } from '../dex/index.js';
import { ErrorCode, isTpError } from '../errors.js';
import { createLogger } from '../obs/logger.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type Simulator } from '../sim/simulator.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { createQuoteApp, loadQuoteServiceConfig, type QuoteApp } from './quote-app.js';

/**
 * `tidepool quote-service` on RPC alone (BUS_ENABLED=false): its monitored pools read from the
 * simulator's JSON-RPC at start and at every refresh, quoted over HTTP on real sockets; and the
 * issue's "Done when": the simulator's Raydium AMM v4 pools are real AmmInfo accounts with real
 * vaults, and Raydium SDK v2 reading the same accounts over the same JSON-RPC (getRpcPoolInfos:
 * liquidityStateV4Layout, vault amounts less need_take_pnl) computes the same quotes.
 */

const logger = createLogger({ name: 'quote-rpc-only-test', level: 'silent' });
let sim: Simulator;
let rpcUrl: string;
let app: QuoteApp;
let base: string;

interface SdkLiquidity {
  getRpcPoolInfos(this: unknown, ids: string[]): Promise<Record<string, unknown>>;
  computeAmountOut(this: unknown, params: unknown): { amountOut: { toString(): string }; fee: { toString(): string } };
}
const liquidityExport = LiquidityModule as unknown as { prototype: SdkLiquidity } | { default: { prototype: SdkLiquidity } };
const sdk = ('prototype' in liquidityExport ? liquidityExport : liquidityExport.default).prototype;

/** Raydium SDK v2's view of AMM v4 pools, read from the simulator's JSON-RPC as the SDK reads mainnet. */
async function sdkPools(ids: string[]) {
  const connection = new Connection(rpcUrl, 'processed');
  const rpcData = await sdk.getRpcPoolInfos.call({ scope: { connection } }, ids);
  return toAmmComputePoolInfo(rpcData as Parameters<typeof toAmmComputePoolInfo>[0]);
}

function sdkAmountOut(poolInfo: unknown, mintIn: string, mintOut: string, amountIn: bigint): bigint {
  return BigInt(sdk.computeAmountOut.call({}, { poolInfo, amountIn: toBN(amountIn.toString()), mintIn, mintOut, slippage: 0 }).amountOut.toString());
}

interface V1Quote {
  inAmount?: string;
  outAmount?: string;
  inputAmount?: string;
  outputAmount?: string;
  pool?: string;
  source?: string;
  slot?: string;
  [key: string]: unknown;
}

async function quote(inputMint: string, outputMint: string, amount: bigint, swapMode: string = SwapMode.ExactIn): Promise<{ status: number; body: V1Quote }> {
  const res = await fetch(`${base}/v1/quote`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ inputMint, outputMint, amount: amount.toString(), swapMode, dexes: ['dexa_amm'], onlyDirectRoutes: true }),
  });
  return { status: res.status, body: (await res.json()) as V1Quote };
}

/** Settles the chain so every commitment level reads the same state (the SDK reads at processed too). */
function settle(): void {
  sim.chain.advanceSlot(40);
}

beforeAll(async () => {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: '23', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', tokens: '3', 'pools-per-kind': '3', 'tx-rate': '0' },
  }).values;
  sim = createSimulator(config, { manual: true, logger });
  rpcUrl = (await sim.start()).rpc;
  settle();
  const monitored = sim.chain.pools().map((v) => v.address);
  // MONITORED_POOLS as the command line takes them: through the service's own config loader.
  const loaded = loadQuoteServiceConfig({
    env: { BUS_ENABLED: 'false', RPC_ENDPOINTS: rpcUrl, MONITORED_POOLS: monitored.join(','), PORT: '0', METRICS_PORT: '0', GRPC_PORT: '0', REFRESH_SECONDS: '3600', RATE_LIMIT_RPS: '100000' },
  });
  app = await createQuoteApp(loaded.values, { logger });
  base = (await app.start()).quote;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await sim?.close();
});

describe('tidepool quote-service with BUS_ENABLED=false (RPC only)', () => {
  it('refuses to start without monitored pools or RPC endpoints, naming the settings', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tp-quote-rpc-'));
    const empty = join(dir, 'pools.json');
    writeFileSync(empty, '{"pools": []}');
    const issue = (env: Record<string, string>): string => {
      try {
        loadQuoteServiceConfig({ env: { BUS_ENABLED: 'false', ...env } });
        return 'started';
      } catch (err) {
        return isTpError(err) ? `${err.code} ${err.message}` : String(err);
      }
    };
    expect(issue({ RPC_ENDPOINTS: 'http://127.0.0.1:1', MONITORED_POOLS_FILE: empty })).toMatch(new RegExp(`^${ErrorCode.ConfigInvalid} .*pools.monitored \\(MONITORED_POOLS\\)`));
    expect(issue({ RPC_ENDPOINTS: 'http://127.0.0.1:1', MONITORED_POOLS_FILE: join(dir, 'missing.json') })).toMatch(/^TP_ERR_CONFIG_FILE pools.file/);
    // With the bus on, no monitored pools is fine: the bus names them.
    expect(issue({ BUS_ENABLED: 'true', MONITORED_POOLS_FILE: join(dir, 'missing.json') })).toBe('started');
  });

  it('loads every monitored pool from RPC at start and answers from its cache, as the engine\'s math on the chain\'s state', async () => {
    expect(app.monitored).toHaveLength(sim.chain.pools().length);
    expect(app.cache.stats().totalPools).toBe(sim.chain.pools().length);
    const { status, body } = await quote(WSOL_MINT, USDC_MINT, 1_000_000_000n);
    expect(status, JSON.stringify(body)).toBe(200);
    const views = sim.chain.pools().filter((v) => v.dex === Dex.Amm && v.pool.tokenA === WSOL_MINT && v.pool.tokenB === USDC_MINT);
    expect(views.length).toBeGreaterThan(0);
    const best = views
      .map((v) => ({ pool: v.address, result: quoteSwap(v.pool, { aToB: true, mode: SwapMode.ExactIn, amount: 1_000_000_000n }) }))
      .flatMap((q) => (q.result.ok ? [{ pool: q.pool, out: q.result.amountOut }] : []))
      .sort((a, b) => (a.out > b.out ? -1 : 1))[0]!;
    expect(body.outAmount ?? body.outputAmount).toBe(best.out.toString());
  });

  it('refreshes its pools from RPC: after swaps move them, a refresh round quotes the new state', async () => {
    const view = sim.chain.pools().find((v) => v.dex === Dex.Amm && v.pool.tokenA === WSOL_MINT && v.pool.tokenB === USDC_MINT)!;
    const before = await quote(WSOL_MINT, USDC_MINT, 5_000_000_000n);
    const info = sim.chain.poolInfo(view.address)!;
    for (const pool of sim.chain.pools().filter((v) => v.dex === Dex.Amm && v.pool.tokenA === WSOL_MINT && v.pool.tokenB === USDC_MINT)) {
      sim.chain.sendTransaction(swapTransaction(sim.chain, trader(sim.chain, 1), sim.chain.poolInfo(pool.address)!, { aToB: true, exactIn: true, amount: 20_000_000_000n, threshold: 0n }));
    }
    settle();
    expect(info).toBeDefined();
    const round = await app.refresher!.refresh();
    expect(round.failed).toBe(0);
    const after = await quote(WSOL_MINT, USDC_MINT, 5_000_000_000n);
    expect(after.status).toBe(200);
    // The pools took SOL: a SOL sale now gets less.
    expect(BigInt(after.body.outAmount ?? after.body.outputAmount ?? '0')).toBeLessThan(BigInt(before.body.outAmount ?? before.body.outputAmount ?? '0'));
  });

  it('quotes the simulator\'s Raydium AMM v4 pools exactly as Raydium SDK v2 computes from the same accounts over the same JSON-RPC', async () => {
    settle();
    await app.refresher!.refresh();
    // Real AMM v4 pools hold SPL Token mints only (the program takes no Token-2022 account); the
    // simulator's TOLL pool, a Token-2022 mint with a transfer fee, is quoted with the fee (the
    // trader's amounts), which the SDK's AMM v4 math does not know of: it is left out here.
    const amms = sim.chain.pools().filter((v) => v.dex === Dex.Amm && v.transferFees === undefined);
    expect(amms.length).toBeGreaterThan(2);
    for (const v of amms) {
      expect(sim.chain.getAccount(v.address)!.owner).toBe(RAYDIUM_AMM_V4_PROGRAM_ID);
      expect(sim.chain.getAccount(v.address)!.data).toHaveLength(752);
    }
    const sdkInfo = await sdkPools(amms.map((v) => v.address));
    let compared = 0;
    const pairs = new Map<string, typeof amms>();
    for (const v of amms) pairs.set(`${v.pool.tokenA}/${v.pool.tokenB}`, [...(pairs.get(`${v.pool.tokenA}/${v.pool.tokenB}`) ?? []), v]);
    for (const pools of pairs.values()) {
      const { tokenA, tokenB } = pools[0]!.pool;
      for (const [mintIn, mintOut] of [[tokenA, tokenB], [tokenB, tokenA]] as const) {
        // The reserve of the input side, from the SDK's view: amounts from a millionth to a third of it.
        const reserveIn = BigInt((sdkInfo[pools[0]!.address] as { baseReserve: { toString(): string } }).baseReserve.toString());
        for (const fraction of [1_000_000n, 10_000n, 300n, 20n, 3n]) {
          const amount = (mintIn === tokenA ? reserveIn : BigInt((sdkInfo[pools[0]!.address] as { quoteReserve: { toString(): string } }).quoteReserve.toString())) / fraction;
          if (amount === 0n) continue;
          // The SDK's best over the pair's AMM pools.
          const sdkBest = pools.map((p) => ({ pool: p.address, out: sdkAmountOut(sdkInfo[p.address], mintIn, mintOut, amount) })).sort((a, b) => (a.out > b.out ? -1 : 1))[0]!;
          const { status, body } = await quote(mintIn, mintOut, amount);
          expect(status, JSON.stringify(body)).toBe(200);
          expect(body.outAmount ?? body.outputAmount, `${mintIn}->${mintOut} ${amount}`).toBe(sdkBest.out.toString());
          // Exact out: the service asks the least input the SDK's own exact in turns into that output.
          const exactOut = await quote(mintIn, mintOut, sdkBest.out, SwapMode.ExactOut);
          expect(exactOut.status, JSON.stringify(exactOut.body)).toBe(200);
          const inAmount = BigInt(exactOut.body.inAmount ?? exactOut.body.inputAmount ?? '0');
          const bestOutOf = (x: bigint) => pools.map((p) => sdkAmountOut(sdkInfo[p.address], mintIn, mintOut, x)).reduce((a, b) => (a > b ? a : b));
          expect(bestOutOf(inAmount) >= sdkBest.out).toBe(true);
          expect(bestOutOf(inAmount - 1n) < sdkBest.out).toBe(true);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(10);
  });
});
