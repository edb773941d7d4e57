/**
 * Test support of the executor: worker wallets made of genesis traders (they hold wrapped SOL and
 * every token in associated token accounts), opportunities planted on a running simulator (a price
 * gap, then the arbitrage planner over the simulator's pool states, or a one-hop order), and the
 * balances the chain holds for a wallet, wallets funded through the simulator's faucets, and the
 * opportunities and results on the bus.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';

import { PoolCache } from '../../cache/index.js';
import { associatedTokenAddress, keypairFromSeed, keypairSeed, USDC_MINT, WSOL_MINT } from '../../chain/index.js';
import { simCommand } from '../../cli/commands/sim.js';
import { ErrorCode, TpError } from '../../errors.js';
import { tradeIdOf } from '../../executor/index.js';
import { ArbitragePlanner, DEFAULT_ARBITRAGE_SETTINGS, orderOpportunity, type ArbitrageSettings } from '../../planner/index.js';
import { WalletManager, WalletPassphrase, secretKeyBytes, type WalletRecord } from '../../wallets/index.js';
import { type SqlClient } from '../../state/index.js';
import type { NatsConnection } from 'nats';

import { eventually } from '../testing.js';

import {
  EXECUTION_REQUEST_TOKEN,
  decodeExecutionRequest,
  decodeExecutionResult,
  encodeTradeOpportunity,
  executionResultFilter,
  tradeOpportunitySubject,
  type ExecutionRequest,
  type ExecutionResult,
  type TradeOpportunity,
} from '../../messages/index.js';
import { storePool } from '../../quote/testing.js';
import type { Trader } from '../../sim/actors.js';
import type { SimChain } from '../../sim/chain.js';
import { PriceGapError, openPriceGap } from '../../sim/index.js';
import { loadConfig } from '../../config/loader.js';
import { executorSchema } from '../executor-app.js';
import type { FixtureBus, PlatformFixture } from './platform-fixture.js';

export const TEST_PASSPHRASE = 'executor-test-passphrase';

/** Imports genesis traders as enabled worker wallets (through a Solana CLI keypair file, as an operator would). */
export async function importWorkers(db: SqlClient, traders: readonly Trader[]): Promise<WalletRecord[]> {
  const manager = new WalletManager({ db, passphrase: WalletPassphrase.resolve({ passphrase: TEST_PASSPHRASE }) });
  const dir = mkdtempSync(join(tmpdir(), 'tp-executor-'));
  const out: WalletRecord[] = [];
  for (const [i, t] of traders.entries()) {
    const file = join(dir, `worker-${i}.json`);
    writeFileSync(file, JSON.stringify([...secretKeyBytes(t.keypair, keypairSeed(t.keypair))]));
    out.push(await manager.importKeypairFile('worker', file));
  }
  return out;
}

/** Resolves when the chain has `signature` confirmed. */
export async function confirmedOn(chain: SimChain, signature: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = chain.signatureStatus(signature);
    if (s !== null && s.confirmationStatus !== 'processed') return;
    if (Date.now() > until) throw new TpError(ErrorCode.Deadline, `${signature} not confirmed within ${timeoutMs} ms`, { context: { signature, deadlineMs: timeoutMs } });
    await new Promise((r) => setTimeout(r, 10));
  }
}

function plainPools(chain: SimChain) {
  return chain.pools().filter((p) => p.transferFees === undefined);
}

/** Opens a price gap of `gapBps` on an AMM pool of a wrapped SOL pair and waits for it to land. */
export async function plantGap(chain: SimChain, gapBps = 100): Promise<void> {
  for (const p of plainPools(chain).filter((v) => v.dex === 'dexa_amm' && (v.pool.tokenA === WSOL_MINT || v.pool.tokenB === WSOL_MINT))) {
    for (const o of plainPools(chain).filter((o) => o.address !== p.address && new Set([o.pool.tokenA, o.pool.tokenB, p.pool.tokenA, p.pool.tokenB]).size === 2)) {
      for (const direction of ['up', 'down'] as const) {
        let signature: string;
        try {
          signature = openPriceGap(chain, { pool: p.address, reference: o.address, gapBps, direction }).signature;
        } catch (err) {
          if (err instanceof PriceGapError) continue;
          throw err;
        }
        await confirmedOn(chain, signature);
        return;
      }
    }
  }
  throw new TpError(ErrorCode.NotFound, `no pool to open a gap of ${gapBps} bps on`);
}

/** The best arbitrage on the chain's current pool states (after `plantGap`), input at most `maxInput`. */
export function arbitrageOpportunity(chain: SimChain, maxInput = 20_000_000_000n, over: Partial<TradeOpportunity> = {}, settings: Partial<ArbitrageSettings> = {}): TradeOpportunity {
  const cache = new PoolCache({ maxPoolCount: 1000 });
  for (const view of plainPools(chain)) storePool(cache, chain.pool(view.address)!, chain.slot('confirmed'));
  const planner = new ArbitragePlanner(cache, { ...DEFAULT_ARBITRAGE_SETTINGS, strategyId: 'arb-test', maxInput, opportunityTtlMs: 30_000, ...settings });
  for (const view of plainPools(chain)) planner.addPool(view.address, view.pool.tokenA, view.pool.tokenB);
  const op = planner.evaluateAll()[0];
  if (op === undefined) throw new TpError(ErrorCode.NotFound, `no arbitrage on the current states with an input of at most ${maxInput}`);
  return { ...op, ...over };
}

/** A DCA sell of `amount` wrapped SOL on an AMM pool (direct path). */
export function orderOpportunityOn(chain: SimChain, amount = 100_000_000n): TradeOpportunity {
  const view = plainPools(chain).find((p) => p.dex === 'dexa_amm' && (p.pool.tokenA === WSOL_MINT || p.pool.tokenB === WSOL_MINT))!;
  const now = Date.now();
  const loaded = { address: view.address, dex: view.dex, pool: view.pool, context: view.ctx, slot: chain.slot('confirmed'), data: chain.getAccount(view.address)!.data };
  const op = orderOpportunity({ id: randomUUID(), strategy: 'dca', strategyId: 'dca-test', side: 'sell', loaded, inputMint: WSOL_MINT, amount, slippageBps: 50, ttlMs: 30_000, now, stateAgeMs: 0, details: {} });
  if (typeof op === 'string') throw new TpError(ErrorCode.RouteInvalid, op, { context: { pool: view.address, amount: amount.toString() } });
  return op;
}

/** Lamports and per-mint token balances of `trader`'s associated accounts, confirmed. */
export function holdingsOf(chain: SimChain, trader: Trader): { lamports: bigint; tokens: Map<string, bigint> } {
  const tokens = new Map<string, bigint>();
  for (const [mint, account] of trader.tokenAccounts) tokens.set(mint, chain.getTokenBalance(account, 'confirmed')?.amount ?? 0n);
  return { lamports: chain.getAccount(trader.keypair.address, 'confirmed')?.lamports ?? 0n, tokens };
}

export type ExecutionOrder = { kind: 'request'; seq: number; request: ExecutionRequest } | { kind: 'result'; seq: number; result: ExecutionResult };

/** Every message of the EXECUTION_ORDERS stream, in stream order, decoded by its subject. */
export async function executionOrdersStored(nc: NatsConnection, prefix: string): Promise<ExecutionOrder[]> {
  const jsm = await nc.jetstreamManager();
  const stream = `${prefix}EXECUTION_ORDERS`;
  const { state } = await jsm.streams.info(stream);
  const out: ExecutionOrder[] = [];
  for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq });
    if (m.subject.startsWith(`${prefix}execution.orders.${EXECUTION_REQUEST_TOKEN}.`)) out.push({ kind: 'request', seq, request: decodeExecutionRequest(m.data) });
    else out.push({ kind: 'result', seq, result: decodeExecutionResult(m.data) });
  }
  return out;
}

/** Publishes `op` on trade.opportunities.<strategy> under the bus's prefix, as the planner does. */
export async function publishOpportunity(bus: FixtureBus, op: TradeOpportunity, msgID = op.id): Promise<void> {
  await bus.nc.jetstream().publish(tradeOpportunitySubject(op.strategy, bus.prefix), encodeTradeOpportunity(op), { msgID });
}

/** Every execution result published under the fixture's bus prefix from now on, by trade id. */
export function executionResultsByTrade(fx: PlatformFixture, prefix: string): Map<string, ExecutionResult> {
  const results = new Map<string, ExecutionResult>();
  fx.collect(executionResultFilter(prefix), decodeExecutionResult, (r) => results.set(r.tradeId, r));
  return results;
}

/** The result of `op`'s trade once `results` (from `executionResultsByTrade`) has it. */
export function resultOfTrade(results: ReadonlyMap<string, ExecutionResult>, op: TradeOpportunity, ms = 30_000): Promise<ExecutionResult> {
  return eventually(() => results.get(tradeIdOf(op.id)), ms, `the result of ${op.id}`);
}

/** The amounts `faucetFundedTrader` asks the faucets for: SOL, wrapped SOL to sell, USDC. */
export const FAUCET_FUNDING = { lamports: '20000000000', wrappedSol: '5000000000', usdc: '10000000' } as const;

/** `tidepool sim faucet` against `rpcUrl`: its JSON answer; throws unless it exits 0. */
async function faucet(rpcUrl: string, ...args: string[]): Promise<Record<string, string>> {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (c) => (text += String(c)));
  const code = await simCommand.run(['faucet', '--rpc-url', rpcUrl, ...args], { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: {} });
  if (code !== 0) throw new TpError(ErrorCode.Io, `tidepool sim faucet ${args.join(' ')} exited ${code}`, { context: { args, exitCode: code } });
  return JSON.parse(text) as Record<string, string>;
}

/**
 * A wallet nobody has used, funded only through the faucets (`FAUCET_FUNDING`): SOL, wrapped SOL
 * to sell, a USDC account; with the balances each faucet answered.
 */
export async function faucetFundedTrader(rpcUrl: string): Promise<{ trader: Trader; balances: { lamports: string; wrappedSol: string; usdc: string } }> {
  const keypair = keypairFromSeed(randomBytes(32));
  const wallet = keypair.address;
  const balances = {
    lamports: (await faucet(rpcUrl, '--wallet', wallet, '--sol', '--amount', FAUCET_FUNDING.lamports)).balance!,
    wrappedSol: (await faucet(rpcUrl, '--wallet', wallet, '--mint', 'SOL', '--amount', FAUCET_FUNDING.wrappedSol)).balance!,
    usdc: (await faucet(rpcUrl, '--wallet', wallet, '--mint', 'USDC', '--amount', FAUCET_FUNDING.usdc)).balance!,
  };
  return { trader: { keypair, tokenAccounts: new Map([WSOL_MINT, USDC_MINT].map((m) => [m, associatedTokenAddress(wallet, m)])) }, balances };
}

/** A real-mode executor's configuration on the fixture's parts (`serviceFlags`) with the test passphrase; `flags` win. */
export function realExecutorConfig(fx: PlatformFixture, flags: Record<string, string>): ReturnType<typeof loadConfig<typeof executorSchema>> {
  return loadConfig(executorSchema, { env: { TIDEPOOL_WALLET_PASSPHRASE: TEST_PASSPHRASE }, flags: { ...fx.serviceFlags(), ...flags } });
}
