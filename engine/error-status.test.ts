import { status as grpcJsStatus } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';

import { ERROR_STATUS, GrpcStatus, clientErrorOf, errorStatusOf, grpcStatusOf, httpStatusOf } from './error-status.js';
import { ErrorCode } from './errors.js';

describe('the error code table', () => {
  it('has a row for every code', () => {
    expect(Object.keys(ERROR_STATUS).sort()).toEqual(Object.values(ErrorCode).sort());
  });

  it("numbers gRPC statuses as grpc-js does", () => {
    for (const [name, value] of Object.entries(GrpcStatus)) {
      expect(grpcJsStatus[name as keyof typeof grpcJsStatus], name).toBe(value);
    }
  });

  it('gives the statuses of docs/architecture.md §3 to the quote errors, HTTP and gRPC matching', () => {
    const expected: [ErrorCode, number, GrpcStatus][] = [
      [ErrorCode.BadParameter, 400, GrpcStatus.INVALID_ARGUMENT],
      [ErrorCode.UnknownMint, 404, GrpcStatus.NOT_FOUND],
      [ErrorCode.NoPoolsInCache, 404, GrpcStatus.NOT_FOUND],
      [ErrorCode.NoPoolForPair, 404, GrpcStatus.NOT_FOUND],
      [ErrorCode.RateLimited, 429, GrpcStatus.RESOURCE_EXHAUSTED],
      [ErrorCode.NoValidQuotes, 503, GrpcStatus.UNAVAILABLE],
      [ErrorCode.CircuitOpen, 503, GrpcStatus.UNAVAILABLE],
      [ErrorCode.RpcFallbackFailed, 503, GrpcStatus.UNAVAILABLE],
      [ErrorCode.Unavailable, 503, GrpcStatus.UNAVAILABLE],
      [ErrorCode.Deadline, 504, GrpcStatus.DEADLINE_EXCEEDED],
      [ErrorCode.Internal, 500, GrpcStatus.INTERNAL],
      [ErrorCode.Unauthenticated, 401, GrpcStatus.UNAUTHENTICATED],
      [ErrorCode.PayloadTooLarge, 413, GrpcStatus.RESOURCE_EXHAUSTED],
    ];
    for (const [code, http, grpc] of expected) {
      expect([httpStatusOf(code), grpcStatusOf(code)], code).toEqual([http, grpc]);
    }
    // Every 4xx is a client's doing and every gRPC status of it too; UNAVAILABLE ("try again") is
    // never the status of a write whose outcome is unknown.
    for (const [code, { http, grpc }] of Object.entries(ERROR_STATUS)) {
      if (http >= 400 && http < 500) expect([GrpcStatus.INVALID_ARGUMENT, GrpcStatus.NOT_FOUND, GrpcStatus.RESOURCE_EXHAUSTED, GrpcStatus.UNIMPLEMENTED, GrpcStatus.ABORTED, GrpcStatus.UNAUTHENTICATED], code).toContain(grpc);
    }
    expect(grpcStatusOf(ErrorCode.RpcProxyWriteOutcomeUnknown)).not.toBe(GrpcStatus.UNAVAILABLE);
  });

  it("shows a client its error, but never the engine's own failures", () => {
    expect(clientErrorOf(ErrorCode.UnknownMint, 'unknown token X')).toEqual({ code: ErrorCode.UnknownMint, message: 'unknown token X', http: 404, grpc: GrpcStatus.NOT_FOUND });
    for (const code of [ErrorCode.AccountInvalid, ErrorCode.Io, ErrorCode.ConfigFile, ErrorCode.BusPublish, ErrorCode.ArgumentInvalid, ErrorCode.TransactionInvalid, 'TP_ERR_NOT_A_CODE']) {
      expect(clientErrorOf(code, 'secret detail'), code).toEqual({ code: ErrorCode.Internal, message: 'internal error', http: 500, grpc: GrpcStatus.INTERNAL });
    }
    expect(errorStatusOf('TP_ERR_NOT_A_CODE')).toBe(ERROR_STATUS[ErrorCode.Internal]);
  });
});

describe('client errors never carry secrets (issue 11, item 4)', () => {
  it('masks URL credentials, key parameters and tokens quoted in a message', () => {
    const shown = clientErrorOf(ErrorCode.RpcFallbackFailed, 'RPC http://user:pass@h:8899/?api-key=K3Y failed: Bearer eyJ.abc');
    expect(shown.message).toBe('RPC http://user:***@h:8899/?api-key=*** failed: Bearer ***');
  });
});
