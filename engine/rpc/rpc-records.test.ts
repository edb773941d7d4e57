import { describe, expect, it } from 'vitest';

import { Prng } from '../prng.js';
import { ByteRingReader, ByteRingWriter, createByteRing } from '../threads/byte-ring.js';
import type { AccountData } from './rpc-client.js';
import { ErrorCode, isTpError } from '../errors.js';
import { rpcFailure, type RpcFailure, type RpcFailureKind } from './rpc-errors.js';
import { AnswerDecoder, AnswerEncoder, decodeRequest, encodeRequest } from './rpc-records.js';
import { ANSWER_ERROR } from './rpc-ring-layout.js';
import { testAddress } from '../scanner/testing/rpc-fixture.js';

const OWNER = testAddress(0, 9);

function account(size: number, seed: number, extra: Partial<AccountData> = {}): AccountData {
  return { data: new Prng(seed).bytes(size), owner: OWNER, lamports: 1_000_000n + BigInt(seed), executable: false, slot: 0n, ...extra };
}

/** Every part of a call's answer through a real ring, decoded as RpcThread does. */
function roundTrip(accounts: (AccountData | null)[], slot: bigint, ringBytes = 1 << 16): { got: (AccountData | null)[]; records: number } {
  const sab = createByteRing(ringBytes);
  const writer = new ByteRingWriter(sab);
  const reader = new ByteRingReader(sab);
  const encoder = new AnswerEncoder(writer.maxPayloadBytes);
  const decoder = new AnswerDecoder();
  expect(encoder.problem(accounts)).toBeNull();
  const got = new Array<AccountData | null>(accounts.length);
  let records = 0;
  let next = 0;
  let done: boolean;
  do {
    const end = encoder.partEnd(accounts, next);
    const record = encoder.accounts(42, accounts, next, end);
    expect(writer.tryWrite(slot, 0, record)).toBe(true);
    next = end;
    const r = reader.tryRead()!;
    decoder.header(r.payload);
    expect(decoder.callId).toBe(42);
    expect(decoder.total).toBe(accounts.length);
    decoder.accounts(r.payload, r.slotBigInt(), got);
    done = decoder.last;
    reader.release();
    records++;
  } while (next < accounts.length);
  expect(done).toBe(true);
  return { got, records };
}

describe('request records', () => {
  it('carry the call id and every key, any string included', () => {
    const keys = [testAddress(1), testAddress(2), 'not-a-key', 'ünïcode', ''];
    const into = Buffer.alloc(1024);
    const length = encodeRequest(into, 0xfffffffe, keys);
    expect(decodeRequest(into.subarray(0, length))).toEqual({ callId: 0xfffffffe, addresses: keys });
  });

  it('report a request that does not fit, and refuse a length past the end when read', () => {
    const keys = Array.from({ length: 100 }, (_, i) => testAddress(i));
    expect(encodeRequest(Buffer.alloc(200), 1, keys)).toBe(-1);
    const into = Buffer.alloc(8192);
    const length = encodeRequest(into, 1, keys);
    expect(() => decodeRequest(into.subarray(0, length - 1))).toThrow(expect.objectContaining({ code: ErrorCode.EntryMalformed, context: expect.objectContaining({ record: 'rpc-ring' }) }));
  });
});

describe('answer records', () => {
  it('carry data, owner, exact lamports, executable, the slot and missing accounts', () => {
    const accounts = [account(165, 1), null, account(0, 2, { lamports: 18_446_744_073_709_551_615n, executable: true, owner: testAddress(5, 7) }), account(10_240, 3)];
    const slot = 2n ** 40n + 3n;
    const { got, records } = roundTrip(accounts, slot, 1 << 16);
    expect(records).toBe(1);
    expect(got).toEqual(accounts.map((a) => (a === null ? null : { ...a, slot })));
  });

  it('split a call larger than a record into parts, in order', () => {
    // 4 KiB records (an 8 KiB ring): 40 accounts of 1 KiB take several parts.
    const accounts = Array.from({ length: 40 }, (_, i) => (i % 7 === 3 ? null : account(1000 + i, i)));
    const { got, records } = roundTrip(accounts, 9n, 1 << 13);
    expect(records).toBeGreaterThan(5);
    expect(got).toEqual(accounts.map((a) => (a === null ? null : { ...a, slot: 9n })));
  });

  it('copy the data out of the ring: an account stays intact after its space is reused', () => {
    const sab = createByteRing(1 << 12);
    const writer = new ByteRingWriter(sab);
    const reader = new ByteRingReader(sab);
    const encoder = new AnswerEncoder(writer.maxPayloadBytes);
    const decoder = new AnswerDecoder();
    const first = [account(1500, 1)];
    writer.tryWrite(1, 0, encoder.accounts(1, first, 0, 1));
    const got = new Array<AccountData | null>(1);
    const r = reader.tryRead()!;
    decoder.header(r.payload);
    decoder.accounts(r.payload, 1n, got);
    reader.release();
    for (let i = 0; i < 8; i++) {
      expect(writer.tryWrite(1, 0, encoder.accounts(2, [account(1500, 100 + i)], 0, 1))).toBe(true);
      reader.tryRead();
      reader.release();
    }
    expect(got[0]!.data).toEqual(first[0]!.data);
    expect(got[0]!.data.buffer).not.toBeInstanceOf(SharedArrayBuffer);
  });

  it('name an account too large for a record as the problem', () => {
    const encoder = new AnswerEncoder(4096);
    expect(encoder.problem([account(10, 1), account(5000, 2)])).toMatch(/account 1 holds 5000 bytes/);
  });

  it('carry an RpcFailure of every kind with its message, endpoint, method and codes', () => {
    const encoder = new AnswerEncoder(1 << 12);
    const decoder = new AnswerDecoder();
    const kinds: RpcFailureKind[] = ['rpc', 'timeout', 'http', 'network', 'malformed'];
    for (const kind of kinds) {
      const sent = rpcFailure(kind, `getMultipleAccounts: ${kind} went wrong`, {
        endpoint: 'http://127.0.0.1:8899/',
        method: 'getMultipleAccounts',
        rpcCode: kind === 'rpc' ? -32005 : undefined,
        httpStatus: kind === 'http' ? 503 : undefined,
      });
      const record = new Uint8Array(encoder.error(7, sent));
      decoder.header(record);
      expect(decoder.type).toBe(ANSWER_ERROR);
      expect(decoder.last).toBe(true);
      const got = decoder.error(record) as RpcFailure;
      expect(isTpError(got, ErrorCode.RpcFailed)).toBe(true);
      expect({ kind: got.context.kind, message: got.message, endpoint: got.context.endpoint, method: got.context.method, rpcCode: got.context.rpcCode, httpStatus: got.context.httpStatus }).toEqual({
        kind: sent.context.kind,
        message: sent.message,
        endpoint: sent.context.endpoint,
        method: sent.context.method,
        rpcCode: sent.context.rpcCode,
        httpStatus: sent.context.httpStatus,
      });
    }
    const other = decoder.error(new Uint8Array(encoder.error(8, new TypeError('boom'))));
    expect(isTpError(other, ErrorCode.RpcFailed)).toBe(false);
    expect(other.message).toBe('boom');
  });

  it('cut an overlong error message to the record, as valid UTF-8', () => {
    const encoder = new AnswerEncoder(1024);
    const decoder = new AnswerDecoder();
    const record = new Uint8Array(encoder.error(1, new Error('é'.repeat(5000))));
    expect(record.length).toBeLessThanOrEqual(1024);
    decoder.header(record);
    const message = decoder.error(record).message;
    expect(message.length).toBeGreaterThan(400);
    expect(message).toBe('é'.repeat(message.length));
  });

  it('refuse a record whose lengths run past its end', () => {
    const encoder = new AnswerEncoder(1 << 12);
    const decoder = new AnswerDecoder();
    const record = new Uint8Array(encoder.accounts(1, [account(300, 1)], 0, 1));
    const cut = record.subarray(0, record.length - 1);
    decoder.header(cut);
    expect(() => decoder.accounts(cut, 1n, [null])).toThrow(expect.objectContaining({ code: ErrorCode.EntryMalformed, context: expect.objectContaining({ record: 'rpc-ring' }) }));
    expect(() => decoder.header(record.subarray(0, 5))).toThrow(expect.objectContaining({ code: ErrorCode.EntryMalformed, context: { record: 'rpc-ring', problem: 'answer of 5 bytes' } }));
  });
});
