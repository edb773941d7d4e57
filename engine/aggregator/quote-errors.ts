/**
 * QuoteError values the aggregator itself writes into local_error / external_error, and the gRPC
 * status of its handlers' errors, both from the engine's one code table (engine/error-status.ts).
 */
import { GrpcStatus, grpcStatusOf as grpcStatusOfCode } from '../error-status.js';
import { ErrorCode, TpError, type AggregatedFailureContext } from '../errors.js';
import type { WireQuoteError } from '../quote/index.js';

/** The source did not answer within its timeout (GetAggregatedQuote). */
export function deadlineError(source: string, timeoutMs: number): WireQuoteError {
  return { code: ErrorCode.Deadline, grpcStatus: grpcStatusOfCode(ErrorCode.Deadline), message: `${source} upstream did not answer within ${timeoutMs} ms` };
}

/** The source's upstream stream is down (or has no fresh quote for the pair). */
export function unavailableError(source: string, why: string): WireQuoteError {
  return { code: ErrorCode.Unavailable, grpcStatus: grpcStatusOfCode(ErrorCode.Unavailable), message: `${source} upstream: ${why}` };
}

/**
 * The failure of a GetAggregatedQuote where neither source has a quote: a timeout anywhere →
 * DEADLINE_EXCEEDED (spec: neither answered in time); both report no route → NOT_FOUND; otherwise
 * (an upstream down) → UNAVAILABLE.
 */
export function noQuoteError(local: WireQuoteError, external: WireQuoteError): TpError {
  const message = `no quote: local ${local.code} (${local.message}); external ${external.code} (${external.message})`;
  const context: AggregatedFailureContext = { localError: local.code, externalError: external.code };
  if (local.grpcStatus === GrpcStatus.DEADLINE_EXCEEDED || external.grpcStatus === GrpcStatus.DEADLINE_EXCEEDED) {
    return new TpError(ErrorCode.Deadline, message, { context });
  }
  if (local.grpcStatus === GrpcStatus.NOT_FOUND && external.grpcStatus === GrpcStatus.NOT_FOUND) {
    return new TpError(ErrorCode.NotFound, message, { context });
  }
  return new TpError(ErrorCode.Unavailable, message, { context });
}

/** gRPC status of an error thrown by the aggregator's handlers: the code table's, INTERNAL for anything else. */
export function grpcStatusOf(err: unknown): GrpcStatus {
  return err instanceof TpError ? grpcStatusOfCode(err.code) : GrpcStatus.INTERNAL;
}
