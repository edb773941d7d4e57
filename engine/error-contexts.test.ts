import { describe, expect, it } from 'vitest';

import { ErrorCode, TpError, invalidArgument, isTpError, type ErrorContexts } from './errors.js';
import { quoteFailure } from './quote/quote-failure.js';
import { quoteError } from './quote/errors.js';

/** Every code has a typed context: a code missing from ErrorContexts makes this `false` and tsc fail. */
type Untyped = Exclude<ErrorCode, keyof ErrorContexts>;
const everyCodeTyped: [Untyped] extends [never] ? true : false = true;

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
    // @ts-expect-error the codes typed last fix their fields exactly: no field beyond their shape
    void new TpError(ErrorCode.ConfigFile, 'x', { context: { path: '/etc/t.json', line: 3 } });
    // @ts-expect-error a config file error names the file
    void new TpError(ErrorCode.ConfigFile, 'x', { context: {} });
    // @ts-expect-error Unavailable says what cannot be read: a pool, a stream, a URL, a transaction...
    void new TpError(ErrorCode.Unavailable, 'x', { context: { component: 'bus' } });
    // @ts-expect-error ...each shape whole: a trade id goes with its signature
    void new TpError(ErrorCode.Unavailable, 'x', { context: { tradeId: 't-1' } });
    // @ts-expect-error the oracle's failure is one of its kinds
    void new TpError(ErrorCode.Unavailable, 'x', { context: { oracle: 'down' } });
    // @ts-expect-error NotFound says what was looked for, by its own key (address, pairId, strategy)
    void new TpError(ErrorCode.NotFound, 'x', { context: { pool: 'P' } });
    // @ts-expect-error Internal names its invariant; a bare message goes in the message
    void new TpError(ErrorCode.Internal, 'x', { context: { detail: 'oops' } });
    // @ts-expect-error Io gives a path, a listening address or a command, not a free field
    void new TpError(ErrorCode.Io, 'x', { context: { file: '/tmp/x' } });
    // @ts-expect-error a listening address has its port as a number
    void new TpError(ErrorCode.Io, 'x', { context: { host: '127.0.0.1', port: '80' } });
    // @ts-expect-error the credential refused is a bearer token or an API key
    void new TpError(ErrorCode.Unauthenticated, 'x', { context: { credential: 'cookie' } });
    // @ts-expect-error a wallet error names the wallet, id, tier or field
    void new TpError(ErrorCode.WalletInvalid, 'x', { context: { wallet: 'W' } });
    // @ts-expect-error a route error names its hop as a number
    void new TpError(ErrorCode.RouteInvalid, 'x', { context: { hop: '0' } });
    // @ts-expect-error the proxy's errors say why (reason)
    void new TpError(ErrorCode.RpcProxyUpstreamFailed, 'x', { context: { endpoint: 'a', attempts: 2 } });
    // @ts-expect-error a lost PubSub connection names its endpoint
    void new TpError(ErrorCode.PubsubConnectionLost, 'x', { context: { url: 'ws://node' } });
    // @ts-expect-error the external provider's errors say how the poll ended
    void new TpError(ErrorCode.ExternalServerError, 'x', { context: { status: 502 } });
    // @ts-expect-error quoteFailure is checked against its code: NoValidQuotes counts its candidates
    void quoteFailure(ErrorCode.NoValidQuotes, 'x', { inputMint: 'A', outputMint: 'B' });
    // @ts-expect-error ...and a pair names both of its mints
    void quoteFailure(ErrorCode.AmountTooSmall, 'x', { inputMint: 'A' });
    // @ts-expect-error quoteError is checked against its code: a circuit is the cache's or the provider's
    void quoteError(ErrorCode.CircuitOpen, 'x', { context: { circuit: 'rpc' } });
    const noQuotes = quoteFailure(ErrorCode.NoValidQuotes, 'no valid quotes from cache', { inputMint: 'A', outputMint: 'B', pools: 3, candidates: 0 });
    const listen = new TpError(ErrorCode.Io, 'cannot listen', { context: { host: '127.0.0.1', port: 8080, setting: 'QUOTE_PORT' } });
    const port = 'port' in listen.context ? listen.context.port : undefined;
    expect([everyCodeTyped, noQuotes.context?.candidates, port]).toEqual([true, 0, 8080]);
    const arg = invalidArgument('capacity', 0, 'capacity must be a positive integer, got 0');
    expect([arg.code, arg.context.argument, arg.context.value, arg.message]).toEqual([ErrorCode.ArgumentInvalid, 'capacity', 0, 'capacity must be a positive integer, got 0']);
    const err: unknown = new TpError(ErrorCode.RpcFailed, 'getSlot: timeout', { context: { kind: 'timeout', endpoint: 'http://node', method: 'getSlot' } });
    if (!isTpError(err, ErrorCode.RpcFailed)) throw err;
    const kind: 'rpc' | 'timeout' | 'http' | 'network' | 'malformed' = err.context.kind;
    expect([bad.context.parameter, kind]).toEqual(['amount', 'timeout']);
  });

  it('refuses a field its code does not name, for every code, the once free-form ones included', () => {
    // @ts-expect-error ConfigInvalid takes its setting's value as `value`, not under a name of its own
    void new TpError(ErrorCode.ConfigInvalid, 'x', { context: { setting: 'executor.maxConcurrentTrades', permits: 0 } });
    // @ts-expect-error ...and the issues of a config file with their unknown settings, nothing more
    void new TpError(ErrorCode.ConfigInvalid, 'x', { context: { issues: ['a: unknown setting'], file: 'tidepool.json' } });
    // @ts-expect-error ArgumentInvalid has no index signature: an argument and its value only
    void new TpError(ErrorCode.ArgumentInvalid, 'x', { context: { argument: 'capacity', value: 0, max: 8 } });
    // @ts-expect-error RpcFailed has no index signature: an attempt count is not a field of it
    void new TpError(ErrorCode.RpcFailed, 'x', { context: { kind: 'timeout', endpoint: 'http://node', method: 'getSlot', attempt: 2 } });
    // @ts-expect-error AccountDiscriminator, all optional, still refuses a field beyond them
    void new TpError(ErrorCode.AccountDiscriminator, 'x', { context: { account: 'Reserve', owner: 'KLend' } });
    // @ts-expect-error ...and an object with none of them
    void new TpError(ErrorCode.AccountDiscriminator, 'x', { context: { owner: 'KLend' } });
    // @ts-expect-error BadParameter's extras are named: no `got`
    void new TpError(ErrorCode.BadParameter, 'x', { context: { parameter: 'amount', got: 'x' } });
    // @ts-expect-error a failed publish carries the message id as `msgId`
    void new TpError(ErrorCode.BusPublish, 'x', { context: { subject: 's', id: 'op-1' } });
    const either = ErrorCode.AccountDiscriminator as typeof ErrorCode.AccountDiscriminator | typeof ErrorCode.NotFound;
    // @ts-expect-error a union-typed code takes one of its codes' shapes, not an arbitrary object
    void new TpError(either, 'x', { context: { anything: 1 } });
    const anyCode = ErrorCode.NotFound as ErrorCode;
    // @ts-expect-error ...nor does the union of all codes (a TpError subclass's default)
    void new TpError(anyCode, 'x', { context: { anything: 1 } });
    const shared = new TpError(ErrorCode.ConfigInvalid, 'x', { context: { setting: 'REDIS_URL', service: 'executor', missing: ['REDIS_URL'] } });
    const semaphore = new TpError(ErrorCode.ConfigInvalid, 'x', { context: { setting: 'executor.maxConcurrentTrades', value: 0 } });
    const discriminator = new TpError(either, 'x', { context: { account: 'Reserve' } });
    expect(['missing' in shared.context && shared.context.missing, 'value' in semaphore.context && semaphore.context.value, discriminator.context]).toEqual([
      ['REDIS_URL'],
      0,
      { account: 'Reserve' },
    ]);
  });
});
