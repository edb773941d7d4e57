import { describe, expect, it } from 'vitest';

import { rpcFailure, type RpcFailure, type RpcFailureKind } from '../rpc/index.js';
import { SendFailure, classifySendFailure } from './send-failure.js';
import { resendBackoff } from './submission-run.js';

function failure(kind: RpcFailureKind, details: { rpcCode?: number; httpStatus?: number; data?: unknown; message?: string } = {}): RpcFailure {
  return rpcFailure(kind, details.message ?? `sendTransaction: ${kind}`, {
    endpoint: 'http://node',
    method: 'sendTransaction',
    ...(details.rpcCode === undefined ? {} : { rpcCode: details.rpcCode }),
    ...(details.httpStatus === undefined ? {} : { httpStatus: details.httpStatus }),
    data: details.data,
  });
}

describe('classifySendFailure', () => {
  it('sends again after failures that say nothing about the request', () => {
    for (const kind of ['network', 'timeout', 'http', 'malformed'] as const) expect(classifySendFailure(failure(kind))).toBe(SendFailure.Transient);
    expect(classifySendFailure(failure('rpc', { rpcCode: -32603 }))).toBe(SendFailure.Transient);
    expect(classifySendFailure(failure('rpc', { rpcCode: -32005 }))).toBe(SendFailure.Transient);
    // A JSON-RPC error under HTTP 429 / 5xx: the server's trouble, not the request's.
    expect(classifySendFailure(failure('rpc', { rpcCode: -32000, httpStatus: 503 }))).toBe(SendFailure.Transient);
    expect(classifySendFailure(failure('rpc', { rpcCode: -32000, httpStatus: 429 }))).toBe(SendFailure.Transient);
  });

  it('reads a preflight failure: already processed, blockhash not found, or a refusal', () => {
    expect(classifySendFailure(failure('rpc', { rpcCode: -32002, data: { err: 'AlreadyProcessed' } }))).toBe(SendFailure.AlreadyProcessed);
    expect(classifySendFailure(failure('rpc', { rpcCode: -32002, message: 'Transaction simulation failed: This transaction has already been processed' }))).toBe(SendFailure.AlreadyProcessed);
    expect(classifySendFailure(failure('rpc', { rpcCode: -32002, data: { err: 'BlockhashNotFound' } }))).toBe(SendFailure.BlockhashNotFound);
    expect(classifySendFailure(failure('rpc', { rpcCode: -32002, data: { err: { InstructionError: [0, { Custom: 1 }] } } }))).toBe(SendFailure.Refused);
  });

  it('a verdict on the request is a refusal: bad signature, invalid params, a dropped bundle, anything not an RpcFailure', () => {
    expect(classifySendFailure(failure('rpc', { rpcCode: -32003 }))).toBe(SendFailure.Refused);
    expect(classifySendFailure(failure('rpc', { rpcCode: -32602, httpStatus: 400 }))).toBe(SendFailure.Refused);
    expect(classifySendFailure(failure('rpc', { rpcCode: -32000, httpStatus: 400 }))).toBe(SendFailure.Refused);
    expect(classifySendFailure(new TypeError('bad bytes'))).toBe(SendFailure.Refused);
  });
});

describe('resendBackoff (the shared Backoff, no jitter)', () => {
  it('doubles from the first delay up to the cap', () => {
    const b = resendBackoff(250, 2000);
    expect([b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([250, 500, 1000, 2000, 2000]);
  });
});
