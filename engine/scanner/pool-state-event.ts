/**
 * PoolStateUpdateEvent (spec 02, "Resources and their fields"): what the scanner publishes for each
 * transaction that touched a monitored pool, built from the pool state read after it. The JSON shape
 * is schemas/pool-state-update-event.schema.json; u64 and u128 values are decimal strings.
 */
import { randomUUID } from 'node:crypto';

import type { DecodedPool, Dex } from '../dex/index.js';
import type { LoadedPool } from '../pools/index.js';

export interface PoolStateUpdateEvent {
  eventId: string;
  /** Unix time in milliseconds, at publish. */
  timestamp: number;
  source: 'blockstream';
  /** Milliseconds from receipt of the entry to publish. */
  latency: number;
  pool: { address: string; dex: Dex; tokenA: string; tokenB: string };
  state: {
    slot: string;
    /**
     * The account stream's write version of the newest write the state includes, within `slot`
     * (scanner.stateSource geyser only): consumers order two states of one slot by it.
     */
    writeVersion?: string;
    reserveA: string;
    reserveB: string;
    feeNumerator?: string;
    feeDenominator?: string;
    sqrtPrice?: string;
    tick?: number;
    rawData?: string;
  };
  transaction: { signature: string; confirmed: boolean };
}

/** The subject an event is published on (spec 02, Events): `pool.state.updated.{dex}.{pool_address}`. */
export function poolStateSubject(dex: string, address: string): string {
  return `pool.state.updated.${dex}.${address}`;
}

/** Fee as numerator / denominator: the AMM's own pair, concentrated pools' rate in millionths. */
function feeOf(pool: DecodedPool): [bigint, bigint] | undefined {
  if (pool.dex === 'dexa_amm') return [pool.feeNumerator, pool.feeDenominator];
  if (pool.dex === 'dexb_dlmm') return undefined; // base + variable fee: no single fraction
  return pool.feeRate === undefined ? undefined : [BigInt(pool.feeRate), 1_000_000n];
}

export interface EventInput {
  loaded: LoadedPool;
  /** Token A and B reserves (vault balances for pools that keep them outside the pool account). */
  reserves: readonly [bigint, bigint];
  /** Base58 transaction signature. */
  signature: string;
  /** Milliseconds from receipt of the entry to now. */
  latencyMs: number;
  /** Unix ms; default Date.now(). */
  timestamp?: number;
  /** Put the base64 account data in `state.rawData`. */
  includeRawData?: boolean;
}

export function buildPoolStateUpdateEvent(input: EventInput): PoolStateUpdateEvent {
  const { loaded } = input;
  const pool = loaded.pool;
  const state: PoolStateUpdateEvent['state'] = {
    slot: loaded.slot.toString(),
    reserveA: input.reserves[0].toString(),
    reserveB: input.reserves[1].toString(),
  };
  if (loaded.writeVersion !== undefined) state.writeVersion = loaded.writeVersion.toString();
  const fee = feeOf(pool);
  if (fee !== undefined) {
    state.feeNumerator = fee[0].toString();
    state.feeDenominator = fee[1].toString();
  }
  if (pool.dex === 'dexa_clmm' || pool.dex === 'dexc_whirlpool') {
    state.sqrtPrice = pool.sqrtPrice.toString();
    state.tick = pool.tick;
  }
  if (input.includeRawData === true) state.rawData = Buffer.from(loaded.data.buffer, loaded.data.byteOffset, loaded.data.byteLength).toString('base64');
  return {
    eventId: randomUUID(),
    timestamp: input.timestamp ?? Date.now(),
    source: 'blockstream',
    latency: Math.max(0, input.latencyMs),
    pool: { address: loaded.address, dex: loaded.dex, tokenA: pool.tokenA, tokenB: pool.tokenB },
    state,
    transaction: { signature: input.signature, confirmed: false },
  };
}
