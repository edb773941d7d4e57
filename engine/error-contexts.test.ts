import { describe, expect, it } from 'vitest';

import { ErrorCode, TpError, invalidArgument, isTpError } from './errors.js';

/**
 * The typed contexts of ErrorContexts, checked by the compiler: `npm run check` (tsc over
 * tsconfig.json, which includes the tests) fails when a `@ts-expect-error` line below compiles.
 */
describe('ErrorContexts', () => {
  it('makes a code with a fixed context give its fields, and reads them typed', () => {
    const bad = new TpError(ErrorCode.BadParameter, 'amount is missing', { context: { parameter: 'amount' } });
    // @ts-expect-error BadParameter names its parameter
    void new TpError(ErrorCode.BadParameter, 'no parameter named', { context: {} });
    // @ts-expect-error an RPC failure says what kind of failure it is
    void new TpError(ErrorCode.RpcFailed, 'x', { context: { endpoint: 'http://node', method: 'getSlot' } });
    // @ts-expect-error a worker unavailable is closed or exited, nothing else
    void new TpError(ErrorCode.RpcWorkerUnavailable, 'x', { context: { reason: 'tired' } });
    // @ts-expect-error the simulated node's error code is a number
    void new TpError(ErrorCode.NodeRpcError, 'x', { context: { rpcCode: '-32602' } });
    // @ts-expect-error an invalid argument is named
    void new TpError(ErrorCode.ArgumentInvalid, 'x', { context: { value: 3 } });
    // @ts-expect-error a transaction's problem is one of the listed reasons
    void new TpError(ErrorCode.TransactionInvalid, 'x', { context: { reason: 'too-big' } });
    // @ts-expect-error an account of the wrong size says how long it was
    void new TpError(ErrorCode.AccountSize, 'x', { context: { expected: 82 } });
    // @ts-expect-error a usage error names the flag or setting at fault
    void new TpError(ErrorCode.Usage, 'x', { context: { flag: '--from' } });
    // @ts-expect-error an invalid account gives its address, even when it is not known
    void new TpError(ErrorCode.AccountInvalid, 'x', { context: { dex: 'orca', table: 'T' } });
    // @ts-expect-error a migration is named by its version number
    void new TpError(ErrorCode.DbMigration, 'x', { context: { version: '0003' } });
    // @ts-expect-error the key-value store error names the store or the key
    void new TpError(ErrorCode.KvUnavailable, 'x', { context: { url: 'redis://127.0.0.1' } });
    // @ts-expect-error a wallet passphrase error names the setting or the wallet
    void new TpError(ErrorCode.WalletPassphrase, 'x', { context: {} });
    // @ts-expect-error an invalid amount names the field that holds it
    void new TpError(ErrorCode.InvalidAmount, 'x', { context: { amount: '-1' } });
    // @ts-expect-error a failed publish gives its subject, the in-flight bound or the connection's status
    void new TpError(ErrorCode.BusPublish, 'x', { context: { id: 'op-1' } });
    // @ts-expect-error a deadline gives the milliseconds it allowed (deadlineMs)
    void new TpError(ErrorCode.Deadline, 'x', { context: { timeoutMs: 100 } });
    // @ts-expect-error malformed bytes say where: an offset, their length or the record read
    void new TpError(ErrorCode.EntryMalformed, 'x', { context: { offset: '12' } });
    const arg = invalidArgument('capacity', 0, 'capacity must be a positive integer, got 0');
    expect([arg.code, arg.context.argument, arg.context.value, arg.message]).toEqual([ErrorCode.ArgumentInvalid, 'capacity', 0, 'capacity must be a positive integer, got 0']);
    const err: unknown = new TpError(ErrorCode.RpcFailed, 'getSlot: timeout', { context: { kind: 'timeout', endpoint: 'http://node', method: 'getSlot' } });
    if (!isTpError(err, ErrorCode.RpcFailed)) throw err;
    const kind: 'rpc' | 'timeout' | 'http' | 'network' | 'malformed' = err.context.kind;
    expect([bad.context.parameter, kind]).toEqual(['amount', 'timeout']);
  });
});
