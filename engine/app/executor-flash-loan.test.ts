import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { WSOL_MINT, associatedTokenAddress, buildFittedTransaction, systemTransferInstruction, type Keypair } from '../chain/index.js';
import { USDC_MINT } from '../sim/known-accounts.js';
import { tradeIdOf } from '../executor/index.js';
import { flashLoanFee } from '../lending/index.js';
import { createLogger } from '../obs/logger.js';
import { type ExecutionResult, type TradeOpportunity } from '../messages/index.js';
import { type WalletRecord } from '../wallets/index.js';
import type { Trader } from '../sim/actors.js';
import type { SimReserve } from '../sim/lending-genesis.js';
import type { Simulator } from '../sim/simulator.js';
import { strangerKeypair } from '../sim/testing/chain-fixtures.js';
import { createExecutorApp, type ExecutorApp } from './executor-app.js';
import { arbitrageOpportunity, confirmedOn, executionResultsByTrade, importWorkers, plantGap, publishOpportunity, resultOfTrade, realExecutorConfig } from './testing/executor.js';
import { PlatformFixture, type FixtureBus } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

/**
 * Flash loans through `tidepool executor` (issue 27 item 3): a running simulator (its Kamino
 * Lending reserves, real swaps, a block engine), the local NATS, Redis and PostgreSQL. The worker
 * that borrows holds lamports and no wrapped SOL at all: the loan is its whole input.
 */

const logger = createLogger({ name: 'executor-flash-loan-test', level: process.env.TEST_LOG ?? 'silent' });
const SOL = 1_000_000_000n;
const fx = new PlatformFixture();
let sim: Simulator;
let bus: FixtureBus;
let app: ExecutorApp;
let http: string;
let borrower: Keypair;
let workers: WalletRecord[];
let funded: Trader;
let reserve: SimReserve;
let results: Map<string, ExecutionResult>;

beforeAll(async () => {
  const started = await fx.runningSimulator(40);
  sim = started.sim;
  const chain = sim.chain;
  reserve = chain.genesis.lending.reserves.find((r) => r.liquidityMint === WSOL_MINT)!;
  // The borrower: lamports for fees, nothing else.
  borrower = strangerKeypair(91);
  funded = chain.genesis.actors.traders[2]!;
  const fund = buildFittedTransaction({ payer: chain.genesis.actors.traders[0]!.keypair, recentBlockhash: chain.latestBlockhash().blockhash, instructions: [systemTransferInstruction(chain.genesis.actors.traders[0]!.keypair.address, borrower.address, SOL)] });
  await confirmedOn(chain, chain.sendTransaction(fund.bytes));
  bus = await fx.bus('EXFL');
  await fx.database();
  await fx.keySpace();
  const loaded = realExecutorConfig(fx, {
    'executor-id': 'flash-executor',
    'block-engine-url': started.endpoints.http,
    'busy-retry': '50',
    // only the wrapped SOL reserve: a loan of any other mint has no lender here
    'flash-loan-reserves': reserve.reserve,
    // the simulator's tables: the shared one holds the lending market's accounts
    'lookup-tables': chain.lookupTableAddresses().join(','),
  });
  app = fx.closing(await createExecutorApp(loaded, { logger, retryDelayMs: 50, pollMs: 40 }), 'the executor');
  workers = await importWorkers(app.state.db, [{ keypair: borrower } as Trader, funded]);
  results = executionResultsByTrade(fx, bus.prefix);
  ({ http } = await app.start());
}, 60_000);

afterAll(() => fx.close());

const publish = (op: TradeOpportunity): Promise<void> => publishOpportunity(bus, op);
const resultOf = (op: TradeOpportunity): Promise<ExecutionResult> => resultOfTrade(results, op);

async function tradeRow(op: TradeOpportunity): Promise<{ status: string; actual_profit: bigint | null; expected_profit: bigint } | undefined> {
  const [row] = await app.state.db.query<{ status: string; actual_profit: bigint | null; expected_profit: bigint }>('SELECT status, actual_profit, expected_profit FROM trades WHERE id = $1', [tradeIdOf(op.id)]);
  return row;
}

function tokenBalance(account: string): bigint {
  return sim.chain.getTokenBalance(account, 'confirmed')?.amount ?? 0n;
}

function lamports(address: string): bigint {
  return sim.chain.getAccount(address, 'confirmed')?.lamports ?? 0n;
}

/** The opportunity funded by the wallet: no loan, no lender's fee (as the planner plans it without a reserve). */
function walletFunded(op: TradeOpportunity): TradeOpportunity {
  return { ...op, id: randomUUID(), flashLoan: false, expectedProfit: op.expectedProfit + op.costs.flashLoanFee, costs: { ...op.costs, flashLoanFee: 0n, total: op.costs.total - op.costs.flashLoanFee } };
}

async function skipCount(reason: string): Promise<number> {
  const text = await (await fetch(`${http}/metrics`)).text();
  const m = new RegExp(`executor_opportunities_skipped_total\\{strategy="arbitrage",reason="${reason}",executor="flash-executor"\\} (\\d+)`).exec(text);
  return m === null ? 0 : Number(m[1]);
}

describe('tidepool executor with flash loans', () => {
  it('a loaned arbitrage lands from a wallet without wrapped SOL; its trade row\'s profit is net of the lender\'s fee', async () => {
    // the funded worker is taken by another trade: the borrower, which holds no wSOL, must trade
    const other = await app.state.keys.acquireExecutorLock(workers[1]!.id, 'another-trade');
    try {
      await plantGap(sim.chain, 150);
      const op = arbitrageOpportunity(sim.chain);
      expect(op.flashLoan).toBe(true);
      expect(op.inputMint).toBe(WSOL_MINT);
      const fee = flashLoanFee(op.inputAmount, reserve.feeSf);
      expect(op.costs.flashLoanFee).toBe(fee);
      const wsol = associatedTokenAddress(borrower.address, WSOL_MINT);
      expect(sim.chain.getAccount(wsol, 'confirmed')).toBeNull();
      const [feeVault, supply, lamportsBefore] = [tokenBalance(reserve.feeVault), tokenBalance(reserve.supplyVault), lamports(borrower.address)];
      await publish(op);
      const result = await resultOf(op);
      expect(result).toMatchObject({ status: 'confirmed', walletAddress: borrower.address, path: 'bundle' });
      // the lender was repaid with its fee
      expect(tokenBalance(reserve.feeVault)).toBe(feeVault + fee);
      expect(tokenBalance(reserve.supplyVault)).toBe(supply);
      // the wallet kept output − input − fee, less the fees, the tip and the new account's rent, in lamports
      const wsolGain = tokenBalance(wsol);
      expect(wsolGain).toBe(op.expectedOutput - op.inputAmount - fee);
      const onChain = wsolGain + (lamports(borrower.address) - lamportsBefore);
      expect(result.actualProfit).toBe(onChain);
      const row = await tradeRow(op);
      expect(row).toMatchObject({ status: 'confirmed', actual_profit: onChain, expected_profit: op.expectedProfit });
      // expected profit: output − input − quoted fees − the fee − tip
      expect(row!.expected_profit).toBe(op.expectedOutput - op.inputAmount - op.costs.quotedFees - fee - op.costs.tip);
    } finally {
      await other?.release();
    }
  });

  it('a loan of a mint no configured reserve lends is skipped with its own reason', async () => {
    await plantGap(sim.chain, 150);
    const usdcLoan = arbitrageOpportunity(sim.chain, 20_000_000n, {}, { baseMints: [USDC_MINT] });
    expect(usdcLoan).toMatchObject({ inputMint: USDC_MINT, flashLoan: true });
    const skipped = await skipCount('no_flash_loan_reserve');
    await publish(usdcLoan);
    await eventually(async () => ((await skipCount('no_flash_loan_reserve')) > skipped ? true : undefined), 15_000, 'the skip counted');
    expect(await tradeRow(usdcLoan)).toBeUndefined();
  });

  it('a wallet-funded arbitrage takes no loan and pays no lender\'s fee; the loaned twin planned on the same gap, now losing, is refused', async () => {
    await plantGap(sim.chain, 50);
    // sized to the gap's optimum (not capped): once traded, the same cycle again loses
    const maxInput = 5_000n * SOL;
    const loaned = arbitrageOpportunity(sim.chain, maxInput);
    expect(loaned.inputAmount).toBeLessThan(maxInput);
    const op = walletFunded(loaned);
    const [feeVault, supply] = [tokenBalance(reserve.feeVault), tokenBalance(reserve.supplyVault)];
    const wsol = funded.tokenAccounts.get(WSOL_MINT)!;
    const [wsolBefore, lamportsBefore] = [tokenBalance(wsol), lamports(funded.keypair.address)];
    await publish(op);
    const result = await resultOf(op);
    // only the funded worker holds the input
    expect(result).toMatchObject({ status: 'confirmed', walletAddress: funded.keypair.address });
    expect(tokenBalance(reserve.feeVault)).toBe(feeVault);
    expect(tokenBalance(reserve.supplyVault)).toBe(supply);
    const wsolGain = tokenBalance(wsol) - wsolBefore;
    expect(wsolGain).toBe(op.expectedOutput - op.inputAmount);
    const onChain = wsolGain + (lamports(funded.keypair.address) - lamportsBefore);
    expect(result.actualProfit).toBe(onChain);
    const row = await tradeRow(op);
    expect(row).toMatchObject({ status: 'confirmed', actual_profit: onChain, expected_profit: op.expectedOutput - op.inputAmount - op.costs.quotedFees - op.costs.tip });

    // the gap is gone: the same cycle on a loan would not repay input + fee; refused before anything is sent
    const [feeVaultNow, borrowerLamports, skipped] = [tokenBalance(reserve.feeVault), lamports(borrower.address), await skipCount('unprofitable')];
    await publish(loaned);
    await eventually(async () => ((await skipCount('unprofitable')) > skipped ? true : undefined), 15_000, 'the losing loan refused');
    expect(await tradeRow(loaned)).toBeUndefined();
    expect(results.has(tradeIdOf(loaned.id))).toBe(false);
    expect(tokenBalance(reserve.feeVault)).toBe(feeVaultNow);
    expect(lamports(borrower.address)).toBe(borrowerLamports);
    // the wallet taken while the pools were read was given back with the refusal
    for (const w of workers) {
      const lock = await app.state.keys.acquireExecutorLock(w.id, 'probe');
      expect(lock).not.toBeNull();
      await lock!.release();
    }
  });
});
