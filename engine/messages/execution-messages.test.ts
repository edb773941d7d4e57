import { describe, expect, it } from 'vitest';

import { connectLocal, uniqueName } from '../bus/testing/local-nats.js';
import { TpError } from '../errors.js';
import {
  decodeExecutionRequest,
  decodeExecutionResult,
  encodeExecutionRequest,
  encodeExecutionResult,
  executionRequestFilter,
  executionRequestMessageId,
  executionRequestSubject,
  executionResultFilter,
  executionResultSubject,
  type ExecutionRequest,
  type ExecutionResult,
} from './execution-messages.js';

const WSOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

const result: ExecutionResult = {
  version: 1,
  tradeId: '3b241101-e2bb-4255-8caf-4136c566a962',
  opportunityId: '9b2e0f0c-1c43-4c1f-9f0e-8d7e52b3a1aa',
  strategy: 'arbitrage',
  strategyId: 'arb-1',
  executorId: 'executor-1',
  walletAddress: USDC,
  path: 'bundle',
  status: 'confirmed',
  signature: '5'.repeat(88),
  bundleId: 'b-1',
  slot: 123n,
  profitMint: WSOL,
  expectedProfit: 18_446_744_073_709_551_615n,
  actualProfit: -15_000n,
  fees: 10_000n,
  tip: 5_000n,
  latency: { receivedAt: 1, submittedAt: 2, confirmedAt: 3, submitMs: 1, executionMs: 2 },
  completedAt: 3,
};

const request: ExecutionRequest = {
  version: 1,
  tradeId: result.tradeId,
  opportunityId: result.opportunityId,
  strategy: 'dca',
  strategyId: 'd',
  executorId: 'executor-1',
  walletId: '3b241101-e2bb-4255-8caf-4136c566a963',
  walletAddress: USDC,
  path: 'direct',
  paper: true,
  inputMint: WSOL,
  outputMint: USDC,
  profitMint: USDC,
  inputAmount: 1_000n,
  expectedOutput: 990n,
  minimumOutput: 985n,
  expectedProfit: -10n,
  tip: 0n,
  computeUnitLimit: 60_300,
  computeUnitPrice: 0n,
  receivedAt: 1,
};

describe('ExecutionResult and ExecutionRequest', () => {
  it('round-trip with u64 and signed amounts as decimal strings', () => {
    const bytes = encodeExecutionResult(result);
    const json = JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>;
    expect(json['expectedProfit']).toBe('18446744073709551615');
    expect(json['actualProfit']).toBe('-15000');
    expect(decodeExecutionResult(bytes)).toEqual(result);
    expect(decodeExecutionRequest(encodeExecutionRequest(request))).toEqual(request);
    const paper: ExecutionResult = { ...result, status: 'paper' };
    delete paper.signature;
    delete paper.bundleId;
    expect(decodeExecutionResult(encodeExecutionResult(paper))).toEqual(paper);
    expect(executionResultSubject('grid', 'T_')).toBe('T_execution.orders.grid');
  });

  it('refuses a bad field, naming it, and an unknown version', () => {
    const bad = { ...JSON.parse(Buffer.from(encodeExecutionResult(result)).toString('utf8')), status: 'pending' } as object;
    expect(() => decodeExecutionResult(bad)).toThrow(TpError);
    expect(() => decodeExecutionResult(bad)).toThrow(/\/status/);
    expect(() => decodeExecutionResult({ ...bad, version: 2 })).toThrow(/version 2/);
    expect(() => encodeExecutionRequest({ ...request, tradeId: 'x' })).toThrow(/\/tradeId/);
  });

  it('requests and results share execution.orders.>, each filter takes its own kind only (on NATS)', async () => {
    const prefix = `${uniqueName('EXM')}_`;
    expect(executionRequestSubject('grid', 'T_')).toBe('T_execution.orders.request.grid');
    expect(executionRequestMessageId(result.tradeId)).not.toBe(result.tradeId);
    const nc = await connectLocal();
    try {
      const seen = (filter: string): string[] => {
        const got: string[] = [];
        nc.subscribe(filter, { callback: (_err, m) => got.push(m.subject) });
        return got;
      };
      const all = seen(`${prefix}execution.orders.>`);
      const results = seen(executionResultFilter(prefix));
      const requests = seen(executionRequestFilter(prefix));
      for (const strategy of ['arbitrage', 'grid', 'dca', 'signal'] as const) {
        nc.publish(executionRequestSubject(strategy, prefix), encodeExecutionRequest({ ...request, strategy }));
        nc.publish(executionResultSubject(strategy, prefix), encodeExecutionResult({ ...result, strategy }));
      }
      await nc.flush();
      await nc.drain();
      expect(all).toHaveLength(8);
      expect(results).toEqual(['arbitrage', 'grid', 'dca', 'signal'].map((s) => `${prefix}execution.orders.${s}`));
      expect(requests).toEqual(['arbitrage', 'grid', 'dca', 'signal'].map((s) => `${prefix}execution.orders.request.${s}`));
    } finally {
      if (!nc.isClosed()) await nc.close();
    }
  });
});
