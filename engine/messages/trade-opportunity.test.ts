import { describe, expect, it } from 'vitest';

import { isTpError, ErrorCode } from '../errors.js';
import {
  arbitrageProfit,
  decodeTradeOpportunity,
  encodeTradeOpportunity,
  flashLoanFeeOf,
  newOpportunityId,
  quotedTransactionFees,
  tradeOpportunitySubject,
  type TradeOpportunity,
} from './trade-opportunity.js';

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const POOL_1 = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';
const POOL_2 = 'HJPjoWUrhoZzkNfRpHuieeFk9WcZWjwy6PBjZ81ngndJ';

function arbitrage(overrides: Partial<TradeOpportunity> = {}): TradeOpportunity {
  const input = 1_000_000_000n;
  const mid = 150_000_000n;
  const output = 1_010_000_000n;
  const quotedFees = quotedTransactionFees(1, 400_000, 0n);
  const flashLoanFee = flashLoanFeeOf(input);
  const tip = 5_000n;
  const costs = { poolFees: [2_500_000n, 375_000n], quotedFees, flashLoanFee, tip, total: quotedFees + flashLoanFee + tip };
  return {
    version: 1,
    id: newOpportunityId(),
    strategy: 'arbitrage',
    strategyId: 'arb-1',
    createdAt: 1_700_000_000_000,
    expiresAt: 1_700_000_002_000,
    slot: 1234n,
    stateAgeMs: 12,
    inputMint: SOL,
    outputMint: SOL,
    inputAmount: input,
    expectedOutput: output,
    minimumOutput: input + costs.total,
    expectedProfit: arbitrageProfit(input, output, costs),
    profitMint: SOL,
    flashLoan: true,
    costs,
    route: [
      { step: 0, pool: POOL_1, dex: 'dexa_amm', inputMint: SOL, outputMint: USDC, inputAmount: input, outputAmount: mid, fee: 2_500_000n, feeMint: SOL, priceImpact: 0.001, slot: 1234n },
      { step: 1, pool: POOL_2, dex: 'dexc_whirlpool', inputMint: USDC, outputMint: SOL, inputAmount: mid, outputAmount: output, fee: 375_000n, feeMint: USDC, priceImpact: 0.002, slot: 1235n },
    ],
    ...overrides,
  };
}

function expectInvalid(fn: () => unknown, path: string): void {
  try {
    fn();
  } catch (err) {
    expect(isTpError(err, ErrorCode.MessageInvalid), String(err)).toBe(true);
    expect((err as { context: { path: string } }).context.path).toBe(path);
    return;
  }
  throw new Error('expected TP_ERR_MESSAGE_INVALID');
}

describe('TradeOpportunity v1', () => {
  it('round-trips with u64 amounts as decimal strings', () => {
    const op = arbitrage({ sourceEvent: { id: 'ev-1', receivedAt: 1_699_999_999_990 } });
    const bytes = encodeTradeOpportunity(op);
    const json = JSON.parse(Buffer.from(bytes).toString('utf8'));
    expect(json.inputAmount).toBe('1000000000');
    expect(json.route[1].slot).toBe('1235');
    expect(json.costs.flashLoanFee).toBe('500000');
    expect(decodeTradeOpportunity(bytes)).toEqual(op);
  });

  it('computes spec 03 costs exactly', () => {
    expect(flashLoanFeeOf(1_000_000_000n)).toBe(500_000n);
    // as a klend reserve at 5 bps charges it: rounded, at least one atom
    expect(flashLoanFeeOf(1n)).toBe(1n);
    expect(flashLoanFeeOf(2_999n)).toBe(1n);
    expect(flashLoanFeeOf(3_001n)).toBe(2n);
    expect(quotedTransactionFees(1, 200_000, 1_000n)).toBe(5_000n + 200n);
    expect(quotedTransactionFees(2, 3, 1n)).toBe(10_001n);
    expect(arbitrageProfit(100n, 20_000n, { quotedFees: 5_000n, flashLoanFee: 1n, tip: 5_000n })).toBe(9_899n);
  });

  it('names the subject after the strategy', () => {
    expect(tradeOpportunitySubject('grid')).toBe('trade.opportunities.grid');
    expect(tradeOpportunitySubject('arbitrage', 'T1_')).toBe('T1_trade.opportunities.arbitrage');
  });

  it('refuses a profit that is not output − input − costs', () => {
    const op = arbitrage();
    expectInvalid(() => encodeTradeOpportunity({ ...op, expectedProfit: op.expectedProfit + 1n }), '/expectedProfit');
  });

  it('refuses a route that does not chain', () => {
    const op = arbitrage();
    const route = op.route.map((h) => ({ ...h }));
    route[1]!.inputAmount += 1n;
    expectInvalid(() => encodeTradeOpportunity({ ...op, route }), '/route/1/inputAmount');
  });

  it('refuses a tip outside 5,000 to 6,000, a flash loan without its fee, and a fee without a flash loan', () => {
    const op = arbitrage();
    const tip = 7_000n;
    const costs = { ...op.costs, tip, total: op.costs.quotedFees + op.costs.flashLoanFee + tip };
    expectInvalid(() => encodeTradeOpportunity({ ...op, costs, expectedProfit: arbitrageProfit(op.inputAmount, op.expectedOutput, costs) }), '/costs/tip');
    const free = { ...op.costs, flashLoanFee: 0n, total: op.costs.quotedFees + op.costs.tip };
    expectInvalid(() => encodeTradeOpportunity({ ...op, costs: free, expectedProfit: arbitrageProfit(op.inputAmount, op.expectedOutput, free) }), '/costs/flashLoanFee');
    // the same trade paid from a wallet's own balance is valid without the fee, not with it
    const own = { ...op, flashLoan: false, costs: free, expectedProfit: arbitrageProfit(op.inputAmount, op.expectedOutput, free) };
    expect(decodeTradeOpportunity(encodeTradeOpportunity(own))).toEqual(own);
    expectInvalid(() => encodeTradeOpportunity({ ...own, costs: op.costs, expectedProfit: op.expectedProfit }), '/costs/flashLoanFee');
  });

  it('refuses malformed JSON, unknown fields, numbers for u64 and unknown versions', () => {
    expectInvalid(() => decodeTradeOpportunity('{'), '/');
    const json = JSON.parse(Buffer.from(encodeTradeOpportunity(arbitrage())).toString('utf8'));
    expectInvalid(() => decodeTradeOpportunity(JSON.stringify({ ...json, extra: 1 })), '/extra');
    expectInvalid(() => decodeTradeOpportunity(JSON.stringify({ ...json, inputAmount: 1000000000 })), '/inputAmount');
    expectInvalid(() => decodeTradeOpportunity(JSON.stringify({ ...json, version: 2 })), '/version');
    const { id: _id, ...noId } = json;
    expectInvalid(() => decodeTradeOpportunity(JSON.stringify(noId)), '/id');
  });

  it('needs a side for grid and dca, and no flash loan fee without a flash loan', () => {
    const op = arbitrage();
    const hop = { ...op.route[0]! };
    const costs = { poolFees: [hop.fee], quotedFees: 5_000n, flashLoanFee: 0n, tip: 0n, total: 5_000n };
    const grid: TradeOpportunity = {
      ...op, strategy: 'grid', flashLoan: false, outputMint: USDC, expectedOutput: hop.outputAmount, minimumOutput: hop.outputAmount,
      expectedProfit: 0n, route: [hop], costs,
    };
    expectInvalid(() => encodeTradeOpportunity(grid), '/side');
    expect(decodeTradeOpportunity(encodeTradeOpportunity({ ...grid, side: 'buy', details: { level: 3 } })).side).toBe('buy');
  });
});
