/**
 * JWT bearer auth of the HTTP write endpoints (the scanner's POST /config/pools): the same
 * settings, verifier and `auto` rule as the gRPC services (grpc-auth.ts): on unless the port is
 * bound to loopback. A request without a valid `Authorization: Bearer <jwt>` header is refused
 * with TpError(TP_ERR_UNAUTHENTICATED) (HTTP 401) saying why, never echoing the token.
 */
import { ErrorCode, TpError } from '../errors.js';
import { authEnabled, authIssues, type AuthSettings } from './auth-config.js';
import { AuthError } from './auth-error.js';
import { verifierFromSettings, type JwtVerifier } from './jwt-verifier.js';

/** Resolves when the request's Authorization header carries a valid token; rejects with TP_ERR_UNAUTHENTICATED. */
export type HttpAuthorizer = (authorization: string | undefined) => Promise<void>;

/** The token of an `Authorization: Bearer <jwt>` header, or an AuthError saying what is wrong. */
export function bearerTokenOfHeader(value: string | undefined): string {
  if (value === undefined || value.trim() === '') throw new AuthError('missing Authorization header (expected "Bearer <jwt>")');
  const match = /^Bearer\s+(\S+)$/i.exec(value.trim());
  if (match === null) throw new AuthError('Authorization header is not "Bearer <jwt>"');
  return match[1]!;
}

async function check(verifier: JwtVerifier, authorization: string | undefined): Promise<void> {
  try {
    await verifier.verify(bearerTokenOfHeader(authorization));
  } catch (err) {
    const why = err instanceof AuthError ? err.message : 'token invalid';
    throw new TpError(ErrorCode.Unauthenticated, `unauthenticated: ${why}`, { context: { credential: 'bearer' } });
  }
}

/**
 * The authorizer of an HTTP port bound to `host`: undefined when auth is off for it. Throws
 * TP_ERR_CONFIG_INVALID naming the setting when auth is on without a key.
 */
export function createHttpAuth(settings: AuthSettings, host: string, hostSetting = 'host'): HttpAuthorizer | undefined {
  const issues = authIssues(settings, host, hostSetting);
  if (issues.length > 0) throw new TpError(ErrorCode.ConfigInvalid, `invalid configuration:\n  ${issues.join('\n  ')}`, { context: { issues } });
  if (!authEnabled(settings['auth.mode'], host)) return undefined;
  const verifier = verifierFromSettings(settings);
  return (authorization) => check(verifier, authorization);
}
