import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ensurePlatformStreams, PLATFORM_STREAMS } from '../bus/index.js';
import { TEST_STREAM_MAX_BYTES_SCALE, connectLocal, deleteStreams, uniqueName } from '../bus/testing/local-nats.js';
import { ErrorCode, isTpError } from '../errors.js';
import { OpportunityPublisher } from './opportunity-publisher.js';
import { arbitrageProfit, decodeTradeOpportunity, flashLoanFeeOf, newOpportunityId, type TradeOpportunity } from '../messages/trade-opportunity.js';

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

function opportunity(): TradeOpportunity {
  const input = 2_000_000n;
  const out = 2_100_000n;
  const costs = { poolFees: [1n, 1n], quotedFees: 5_000n, flashLoanFee: flashLoanFeeOf(input), tip: 5_000n, total: 0n };
  costs.total = costs.quotedFees + costs.flashLoanFee + costs.tip;
  return {
    version: 1, id: newOpportunityId(), strategy: 'arbitrage', strategyId: 's', createdAt: 1, expiresAt: 2, slot: 5n, stateAgeMs: 0,
    inputMint: SOL, outputMint: SOL, inputAmount: input, expectedOutput: out, minimumOutput: input + costs.total,
    expectedProfit: arbitrageProfit(input, out, costs), profitMint: SOL, flashLoan: true, costs,
    route: [
      { step: 0, pool: '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2', dex: 'dexa_amm', inputMint: SOL, outputMint: USDC, inputAmount: input, outputAmount: 300n, fee: 1n, feeMint: SOL, priceImpact: 0, slot: 5n },
      { step: 1, pool: 'HJPjoWUrhoZzkNfRpHuieeFk9WcZWjwy6PBjZ81ngndJ', dex: 'dexa_clmm', inputMint: USDC, outputMint: SOL, inputAmount: 300n, outputAmount: out, fee: 1n, feeMint: USDC, priceImpact: 0, slot: 5n },
    ],
  };
}

describe('OpportunityPublisher on the real JetStream', () => {
  let nc: NatsConnection;
  const prefix = `${uniqueName('OP')}_`;

  beforeAll(async () => {
    nc = await connectLocal();
    await ensurePlatformStreams(await nc.jetstreamManager(), { replicas: 1, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
  });
  afterAll(async () => {
    await deleteStreams(nc, PLATFORM_STREAMS.map((s) => `${prefix}${s.name}`));
    await nc.close();
  });

  it('stores an opportunity once per id on trade.opportunities.<strategy>', async () => {
    const publisher = new OpportunityPublisher(nc.jetstream(), prefix);
    const op = opportunity();
    const first = await publisher.publish(op);
    expect(first.subject).toBe(`${prefix}trade.opportunities.arbitrage`);
    expect(first.duplicate).toBe(false);
    expect((await publisher.publish(op)).duplicate).toBe(true);
    const jsm = await nc.jetstreamManager();
    const stored = await jsm.streams.getMessage(`${prefix}TRADE_OPPORTUNITIES`, { seq: first.seq });
    expect(stored.header.get('Nats-Msg-Id')).toBe(op.id);
    expect(decodeTradeOpportunity(stored.data)).toEqual(op);
    expect((await jsm.streams.info(`${prefix}TRADE_OPPORTUNITIES`)).state.messages).toBe(1);
  });

  it('refuses an opportunity that breaks its format before publishing', async () => {
    const publisher = new OpportunityPublisher(nc.jetstream(), prefix);
    const op = { ...opportunity(), expectedProfit: 1n };
    await expect(publisher.publish(op)).rejects.toSatisfy((err: unknown) => isTpError(err, ErrorCode.MessageInvalid));
  });

  it('reports a publish nobody stores as TP_ERR_BUS_PUBLISH', async () => {
    const publisher = new OpportunityPublisher(nc.jetstream(), `${uniqueName('NONE')}_`, 500);
    await expect(publisher.publish(opportunity())).rejects.toSatisfy((err: unknown) => isTpError(err, ErrorCode.BusPublish));
  });
});
