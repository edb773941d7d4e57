import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Prng } from '../prng.js';
import { dataAccount, startRpcFixture, testAddress, type RpcFixture } from '../scanner/testing/rpc-fixture.js';
import { readMultipleAccountsReply } from './multiple-accounts-reply.js';
import { parseMultipleAccounts, type MultipleAccountsResult } from './rpc-client.js';

/** Comparable form: data as plain arrays (a Buffer and a Uint8Array view differ to toEqual). */
function plain(r: MultipleAccountsResult | undefined): unknown {
  return r === undefined ? undefined : { slot: r.slot, accounts: r.accounts.map((a) => (a === null ? null : { ...a, data: [...a.data] })) };
}

function textPath(bytes: Buffer, expected: number): unknown {
  return plain(parseMultipleAccounts(bytes.toString('utf8'), expected, 'http://x'));
}

const reply = (s: string): Buffer => Buffer.from(s, 'utf8');

describe('readMultipleAccountsReply', () => {
  let fx: RpcFixture;
  /** A real reply of the simulator's JSON-RPC, as bytes, and its key count. */
  let real: { bytes: Buffer; keys: number };

  beforeAll(async () => {
    fx = await startRpcFixture();
    const prng = new Prng(7);
    const sizes = [0, 1, 2, 3, 4, 165, 10_240, 40_000];
    const keys = sizes.map((_, i) => testAddress(i));
    sizes.forEach((n, i) => {
      const data = new Uint8Array(n).map(() => prng.int(256));
      const account = dataAccount(data, i === 3 ? 18_446_744_073_709_551_615n : BigInt(1_000 + i), testAddress(50 + i, 9));
      if (i === 4) account.executable = true;
      fx.backend.setAccount(keys[i]!, account);
    });
    keys.splice(2, 0, testAddress(999)); // a missing account in the middle
    const res = await fetch(fx.httpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getMultipleAccounts', params: [keys, { encoding: 'base64', commitment: 'processed' }] }),
    });
    real = { bytes: Buffer.from(await res.arrayBuffer()), keys: keys.length };
  });
  afterAll(async () => {
    await fx.close();
  });

  it('reads a node reply from its bytes exactly as the text parser reads its text', () => {
    const got = readMultipleAccountsReply(real.bytes, real.keys);
    expect(got).toBeDefined();
    expect(plain(got)).toEqual(textPath(real.bytes, real.keys));
    expect(got!.accounts[2]).toBeNull();
    expect(got!.accounts[5]!.executable).toBe(true);
    expect(got!.accounts[4]!.lamports).toBe(18_446_744_073_709_551_615n);
    expect(got!.accounts.map((a) => a?.data.length ?? null)).toEqual([0, 1, null, 2, 3, 4, 165, 10_240, 40_000]);
  });

  it('takes any field order, whitespace and unknown fields of any shape', () => {
    const parsed = JSON.parse(real.bytes.toString('utf8')) as { result: { context: object; value: (Record<string, unknown> | null)[] } };
    const reordered = {
      id: 1,
      extra: { nested: [1, -2.5e-3, true, false, null, 'x', { deep: [[], {}] }] },
      result: {
        value: parsed.result.value.map((a) => (a === null ? null : { space: 0, owner: a.owner, rentEpoch: 2 ** 64, lamports: a.lamports, executable: a.executable, data: a.data })),
        // (Nothing with braces before the slot: the text parser's exact-slot search cannot pass them.)
        context: { note: [1, 'a'], ...parsed.result.context },
      },
      jsonrpc: '2.0',
    };
    // Lamports as the node sent them (digits), not as JSON.parse and stringify round them.
    const exact = [...real.bytes.toString('utf8').matchAll(/"lamports":(\d+)/g)].map((m) => m[1]);
    let k = 0;
    const text = `\r\n ${JSON.stringify(reordered, null, '\t').replace(/"lamports": [^,\n}]+/g, () => `"lamports": ${exact[k++]}`)} \n`;
    const got = readMultipleAccountsReply(reply(text), real.keys);
    expect(got).toBeDefined();
    expect(plain(got)).toEqual(textPath(reply(text), real.keys));
  });

  it('leaves to the text parser every reply it does not take', () => {
    const ok = '{"jsonrpc":"2.0","result":{"context":{"slot":5},"value":[{"data":["AQID","base64"],"executable":false,"lamports":7,"owner":"Own"}]},"id":1}';
    expect(plain(readMultipleAccountsReply(reply(ok), 1))).toEqual(textPath(reply(ok), 1));
    const variants: [string, string][] = [
      ['an error reply', '{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is behind"},"id":1}'],
      ['an escape in a string it reads', ok.replace('"Own"', '"O\\u0077n"')],
      ['an escape in a string it skips', ok.replace('"jsonrpc":"2.0"', '"jsonrpc":"2\\u002e0"')],
      ['a negative lamports', ok.replace('"lamports":7', '"lamports":-7')],
      ['a fractional lamports', ok.replace('"lamports":7', '"lamports":7.0')],
      ['an exponent', ok.replace('"lamports":7', '"lamports":7e0')],
      ['lamports above u64', ok.replace('"lamports":7', '"lamports":18446744073709551616')],
      ['a leading zero', ok.replace('"lamports":7', '"lamports":07')],
      ['a duplicate key', ok.replace('"lamports":7', '"lamports":7,"lamports":8')],
      ['another encoding', ok.replace('"base64"]', '"base58"]')],
      ['unpadded base64', ok.replace('"AQID"', '"AQI"')],
      ['a control character in the data', ok.replace('"AQID"', '"AQ\u0001D"')],
      ['a non-ASCII byte in the data', ok.replace('"AQID"', '"AQ\u00e9D"')],
      ['no slot', ok.replace('"slot":5', '"x":5')],
      ['no owner', ok.replace(',"owner":"Own"', '')],
      ['an account that is an array', ok.replace(/\{"data".*"Own"\}/, '[1]')],
      ['trailing bytes', `${ok}x`],
      ['a truncated reply', ok.slice(0, -3)],
      ['a bad literal', ok.replace('false', 'fals')],
    ];
    for (const [what, text] of variants) expect(readMultipleAccountsReply(reply(text), 1), what).toBeUndefined();
    expect(readMultipleAccountsReply(reply(ok), 2), 'fewer accounts than keys').toBeUndefined();
    expect(readMultipleAccountsReply(reply(ok), 0), 'more accounts than keys').toBeUndefined();
  });

  it('never takes bytes that are not JSON, and reads what JSON.parse reads (mutated replies)', () => {
    const prng = new Prng(11);
    const small = reply('{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.0.15","slot":123},"value":[{"data":["AAECAwQ=","base64"],"executable":false,"lamports":42,"owner":"11111111111111111111111111111111","rentEpoch":18446744073709551615,"space":5},null]},"id":9}');
    let taken = 0;
    for (let i = 0; i < 5_000; i++) {
      const bytes = Buffer.from(small);
      for (let k = prng.range(1, 3); k > 0; k--) {
        const at = prng.int(bytes.length);
        const choice = prng.int(4);
        bytes[at] = choice === 0 ? prng.int(256) : choice === 1 ? 0x20 : choice === 2 ? '0123456789'.charCodeAt(prng.int(10)) : '{}[],:"'.charCodeAt(prng.int(7));
      }
      const got = readMultipleAccountsReply(bytes, 2);
      if (got === undefined) continue;
      taken++;
      const text = bytes.toString('utf8');
      const json = JSON.parse(text) as { result: { context: { slot: number }; value: ({ data: [string, string]; owner: string; lamports: number; executable?: unknown } | null)[] } };
      // u64 compared as JSON.parse rounds them (both round to the nearest double).
      expect(Number(got.slot), text).toBe(json.result.context.slot);
      expect(got.accounts.length, text).toBe(json.result.value.length);
      json.result.value.forEach((a, j) => {
        const mine = got.accounts[j];
        if (a === null) return expect(mine, text).toBeNull();
        expect([...mine!.data], text).toEqual([...Buffer.from(a.data[0], 'base64')]);
        expect(a.data[1], text).toBe('base64');
        expect(mine!.owner, text).toBe(a.owner);
        expect(Number(mine!.lamports), text).toBe(a.lamports);
        expect(mine!.executable, text).toBe(a.executable === true);
      });
    }
    expect(taken).toBeGreaterThan(100); // harmless mutations (whitespace, digits) are still read
  });
});
