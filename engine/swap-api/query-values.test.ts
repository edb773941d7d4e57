import { describe, expect, it } from 'vitest';

import { Prng } from '../dex/testing/prng.js';
import { QueryReader } from './query-values.js';

const JOINED = ['dexes', 'excludeDexes'];
const NAMES = ['inputMint', 'outputMint', 'amount', 'dexes', 'excludeDexes', 'slippageBps', 'a', '', 'amoun', 'amountx'];

/** What the route read before: URLSearchParams, the joined names' repeats joined with `,`. */
function expected(query: string, name: string): string | null {
  const params = new URLSearchParams(query);
  if (JOINED.includes(name)) {
    const all = params.getAll(name);
    return all.length === 0 ? null : all.join(',');
  }
  return params.get(name);
}

describe('QueryReader', () => {
  it('reads a plain query in place, every other query with URLSearchParams', () => {
    const reader = new QueryReader(JOINED);
    expect(reader.read('inputMint=So11111111111111111111111111111111111111112&amount=10')).toBe(reader);
    expect(reader.read('')).toBe(reader);
    for (const query of ['a=%41', 'dexes=Raydium+CLMM', 'a=é', '?a=1', 'a=1\n']) {
      expect(reader.read(query)).toBeInstanceOf(URLSearchParams);
    }
  });

  it("gives URLSearchParams.get's values, repeats of the joined names joined", () => {
    const reader = new QueryReader(JOINED);
    const queries = [
      '',
      'amount=1',
      'amount=1&amount=2',
      'amount=&amount=2',
      'amount&a=b',
      'amount==1=2',
      '&&amount=3&&',
      '=x&amount=4',
      'dexes=Raydium&dexes=Whirlpool&excludeDexes=a,b&dexes=',
      'dexes=Raydium+CLMM&dexes=Meteora%20DLMM',
      'amount=%zz&a=%41',
      '?amount=5',
      'amount=é&dexes=ü',
      'amountx=1&amoun=2&amount=3',
    ];
    for (const query of queries) {
      const values = reader.read(query);
      for (const name of NAMES) expect(values.get(name), `${name} of ${query}`).toBe(expected(query, name));
    }
  });

  it('agrees with URLSearchParams on random queries', () => {
    const rng = new Prng(23);
    const reader = new QueryReader(JOINED);
    const pieces = ['amount', 'dexes', 'excludeDexes', 'a', '=', '&', '1', 'x', ' ', '%', '%41', '+', '?', 'é', ','];
    for (let i = 0; i < 2_000; i++) {
      let query = '';
      for (let n = rng.int(0, 12); n > 0; n--) query += rng.pick(pieces);
      const values = reader.read(query);
      for (const name of NAMES) expect(values.get(name), `${name} of ${JSON.stringify(query)}`).toBe(expected(query, name));
    }
  });
});
