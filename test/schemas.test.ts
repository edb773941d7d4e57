import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';

const schema = JSON.parse(readFileSync(resolve(import.meta.dirname, '../schemas/pool-state-update-event.schema.json'), 'utf8')) as object;
const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);

const event = {
  eventId: '0b6f3c1e-5f7a-4c2b-9d1e-2a3b4c5d6e7f',
  timestamp: 1795351079134,
  source: 'blockstream',
  latency: 1.8,
  pool: {
    address: '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2',
    dex: 'dexc_whirlpool',
    tokenA: 'So11111111111111111111111111111111111111112',
    tokenB: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
  },
  state: { slot: '312000000', reserveA: '18446744073709551615', reserveB: '150000000000', sqrtPrice: '7156302362484408320', tick: -16000, feeNumerator: '3000', feeDenominator: '1000000' },
  transaction: { signature: '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW', confirmed: false },
};

describe('PoolStateUpdateEvent schema (spec 02)', () => {
  it('accepts an event of the spec shape, with u64 amounts as decimal strings', () => {
    expect(validate(event), JSON.stringify(validate.errors)).toBe(true);
    const { sqrtPrice: _s, tick: _t, feeNumerator: _n, feeDenominator: _d, ...required } = event.state;
    expect(validate({ ...event, state: required })).toBe(true);
  });

  it.each([
    ['a reserve as a JSON number (u64 does not fit)', { ...event, state: { ...event.state, reserveA: 1000 } }],
    ['a slot above u64 digits', { ...event, state: { ...event.state, slot: '123456789012345678901' } }],
    ['an unknown dex', { ...event, pool: { ...event.pool, dex: 'raydium' } }],
    ['a source other than blockstream', { ...event, source: 'rpc' }],
    ['a missing signature', { ...event, transaction: { confirmed: false } }],
    ['a field the spec does not name', { ...event, extra: 1 }],
    ['a tick out of range', { ...event, state: { ...event.state, tick: 500000 } }],
    ['a non-base58 pool address', { ...event, pool: { ...event.pool, address: '0OIl' + event.pool.address.slice(4) } }],
    ['a timestamp in seconds as text', { ...event, timestamp: '1795351079' }],
  ])('rejects %s', (_name, bad) => {
    expect(validate(bad)).toBe(false);
  });
});
