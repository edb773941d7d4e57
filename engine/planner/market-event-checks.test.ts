import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createDecoderRegistry } from '../dex/index.js';
import { ErrorCode, isTpError } from '../errors.js';
import type { MarketEvent, TradeOpportunity } from '../messages/index.js';
import { RpcPoolLoader } from '../pools/index.js';
import { manualSimulator } from '../quote/testing.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import type { SimPoolView, Simulator } from '../sim/index.js';
import { PlannerPools } from '../trading/index.js';
import { MAX_CLOCK_SKEW_MS, MAX_EVENT_SLOT_LEAD, marketEventViolations } from './market-event-checks.js';
import { PlannerMetrics } from './planner-metrics.js';
import { PlannerService, type PlannerStrategy } from './planner-service.js';

let sim: Simulator;
let rpc: RpcClient;
let pool: SimPoolView;
let other: SimPoolView;
const NOW = 1_800_000_000_000;

beforeAll(async () => {
  sim = manualSimulator(52);
  const endpoints = await sim.start();
  sim.chain.advanceSlot();
  rpc = new RpcClient({ endpoints: [endpoints.rpc] });
  pool = sim.chain.pools().find((p) => p.dex === 'dexc_whirlpool' && p.transferFees === undefined)!;
  other = sim.chain.pools().find((p) => p.pool.tokenA !== pool.pool.tokenA || p.pool.tokenB !== pool.pool.tokenB)!;
}, 60_000);

afterAll(async () => {
  await rpc?.close();
  await sim?.close();
});

function genuine(): MarketEvent {
  return { version: 1, id: `ev-${pool.address}`, type: 'pool_update', protocol: pool.dex, poolAddress: pool.address, tokenA: pool.pool.tokenA, tokenB: pool.pool.tokenB, timestamp: NOW, slot: sim.chain.slot().toString(), data: {} };
}

/** A planner over the simulator's RPC with one strategy that records what it was shown. */
function planner(): { service: PlannerService; seen: MarketEvent[] } {
  const seen: MarketEvent[] = [];
  const strategy: PlannerStrategy = {
    id: 'recorder',
    type: 'arbitrage',
    onMarketEvent: (event) => {
      seen.push(event);
      return [] as TradeOpportunity[];
    },
  };
  const pools = new PlannerPools(new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry() }), { now: () => NOW });
  const service = new PlannerService({ plannerId: 'p', strategies: [strategy], pools, publisher: { publish: () => Promise.resolve() }, metrics: new PlannerMetrics(new Registry()), now: () => NOW });
  return { service, seen };
}

describe('market events held against the pool the planner read', () => {
  it('plans on a genuine event', async () => {
    const { service, seen } = planner();
    await service.handle(genuine(), NOW);
    expect(seen).toHaveLength(1);
  });

  it("refuses as TP_ERR_MESSAGE_INVALID, without planning, an event whose slot, time, mints or protocol are not the pool's", async () => {
    const forged: [string, MarketEvent][] = [
      ['/slot', { ...genuine(), slot: '18446744073709551615' }],
      ['/slot', { ...genuine(), slot: (sim.chain.slot() + MAX_EVENT_SLOT_LEAD + 10n).toString() }],
      ['/timestamp', { ...genuine(), timestamp: NOW + MAX_CLOCK_SKEW_MS + 1 }],
      ['/tokenA', { ...genuine(), tokenA: other.pool.tokenA, tokenB: other.pool.tokenB }],
      ['/protocol', { ...genuine(), protocol: pool.dex === 'dexa_amm' ? 'dexb_dlmm' : 'dexa_amm' }],
    ];
    for (const [path, event] of forged) {
      const { service, seen } = planner();
      const err = await service.handle(event, NOW).then(() => undefined, (e: unknown) => e);
      expect(isTpError(err, ErrorCode.MessageInvalid), `${path}: ${String(err)}`).toBe(true);
      expect((err as Error).message).toContain(path);
      expect(seen).toEqual([]);
    }
  });

  it('names every violation at once', async () => {
    const { service } = planner();
    await service.handle(genuine(), NOW);
    const loaded = (service as unknown as { options: { pools: PlannerPools } }).options.pools.loaded(pool.address)!;
    const v = marketEventViolations({ ...genuine(), slot: '18446744073709551615', timestamp: NOW + 10 * MAX_CLOCK_SKEW_MS, tokenA: other.pool.tokenA }, loaded, NOW);
    expect(v.map((x) => x.split(':')[0])).toEqual(['/tokenA, /tokenB', '/slot', '/timestamp']);
  });
});
