/**
 * The one place the gRPC services check JWT bearer tokens: `authorization: Bearer <jwt>` call
 * metadata, verified by a JwtVerifier before the handler runs; a call without a valid token ends
 * with UNAUTHENTICATED (16) and a message saying what was wrong (never the token). Used by
 * engine/quote-grpc/stream-calls.ts (the local and external StreamBatchQuotes) and
 * engine/aggregator/grpc-server.ts (QuoteAggregatorService, unary and stream).
 *
 * With auth off the guards return the handler itself: no cost at all. With auth on, a token
 * verified recently (the verifier's cache) lets the handler run synchronously, as before.
 */
import * as grpc from '@grpc/grpc-js';

import { ErrorCode, TpError } from '../errors.js';
import { authEnabled, authIssues, type AuthSettings } from './auth-config.js';
import { AuthError } from './auth-error.js';
import { verifierFromSettings, type JwtVerifier } from './jwt-verifier.js';

/** A server's auth: undefined when off. */
export type GrpcAuth = JwtVerifier | undefined;

/**
 * The auth of a gRPC server bound to `host`: undefined when off, else its verifier (the key file
 * read now). Throws TP_ERR_CONFIG_INVALID naming the setting when auth is on without a key.
 */
export function createGrpcAuth(settings: AuthSettings, host: string, hostSetting = 'host'): GrpcAuth {
  const issues = authIssues(settings, host, hostSetting);
  if (issues.length > 0) throw new TpError(ErrorCode.ConfigInvalid, `invalid configuration:\n  ${issues.join('\n  ')}`, { context: { issues } });
  return authEnabled(settings['auth.mode'], host) ? verifierFromSettings(settings) : undefined;
}

/** The bearer token of the call metadata, or an AuthError saying what is missing. */
export function bearerToken(metadata: grpc.Metadata): string {
  const values = metadata.get('authorization');
  if (values.length === 0) throw new AuthError('missing authorization metadata (expected "Bearer <jwt>")');
  if (values.length > 1) throw new AuthError('more than one authorization metadata value');
  const value = String(values[0]).trim();
  const match = /^Bearer\s+(\S+)$/i.exec(value);
  if (match === null) throw new AuthError('authorization metadata is not "Bearer <jwt>"');
  return match[1]!;
}

/**
 * The verified JWT subject of a call that passed the guard (`guardStream`, `guardUnary`): what
 * per-client limits key on with auth on. Undefined with auth off, without a verified token, or
 * for a token without `sub` ('' is returned as undefined too).
 */
export function verifiedCallSubject(auth: GrpcAuth, metadata: grpc.Metadata): string | undefined {
  if (auth === undefined) return undefined;
  let token: string;
  try {
    token = bearerToken(metadata);
  } catch {
    return undefined;
  }
  const subject = auth.verifiedSubject(token);
  return subject === '' ? undefined : subject;
}

function unauthenticated(err: unknown): Partial<grpc.StatusObject> {
  const why = err instanceof AuthError ? err.message : 'token invalid';
  return { code: grpc.status.UNAUTHENTICATED, details: `unauthenticated: ${why}` };
}

/**
 * Runs `then` once the call's token verifies (synchronously when cached), else `deny` with the
 * UNAUTHENTICATED status.
 */
function check(auth: JwtVerifier, metadata: grpc.Metadata, then: () => void, deny: (status: Partial<grpc.StatusObject>) => void): void {
  let token: string;
  try {
    token = bearerToken(metadata);
  } catch (err) {
    deny(unauthenticated(err));
    return;
  }
  if (auth.isVerified(token)) {
    then();
    return;
  }
  auth.verify(token).then(
    () => {
      // A handler that throws here would otherwise be an unhandled rejection, which ends the process.
      try {
        then();
      } catch (err) {
        deny({ code: grpc.status.INTERNAL, details: err instanceof Error ? err.message : 'internal error' });
      }
    },
    (err: unknown) => deny(unauthenticated(err)),
  );
}

/** A server-streaming handler behind the token check. */
export function guardStream<Req, Res>(auth: GrpcAuth, handler: grpc.handleServerStreamingCall<Req, Res>): grpc.handleServerStreamingCall<Req, Res> {
  if (auth === undefined) return handler;
  return (call) => {
    check(
      auth,
      call.metadata,
      () => {
        if (!call.cancelled) handler(call);
      },
      (status) => call.emit('error', status),
    );
  };
}

/** A unary handler behind the token check. */
export function guardUnary<Req, Res>(auth: GrpcAuth, handler: grpc.handleUnaryCall<Req, Res>): grpc.handleUnaryCall<Req, Res> {
  if (auth === undefined) return handler;
  return (call, callback) => {
    check(
      auth,
      call.metadata,
      () => handler(call, callback),
      (status) => callback(status),
    );
  };
}

/** Call metadata carrying `token` as a bearer token (clients). */
export function setBearerToken(metadata: grpc.Metadata, token: string | undefined): grpc.Metadata {
  if (token) metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}
