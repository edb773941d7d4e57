/**
 * JWT bearer authentication of the REST quote paths (GET /quote, /v1/quote*, /v1/pools*,
 * /swap/v1/quote): the same verifier, settings and `auto` mode as the gRPC services (engine/auth;
 * `createGrpcAuth(config, host)` decides on or off and builds it). The header is
 * `Authorization: Bearer <jwt>`; a request without a valid token gets 401 TP_ERR_UNAUTHENTICATED
 * with `WWW-Authenticate: Bearer` (RFC 6750: `error="invalid_token"` when a token was given but
 * did not verify). Probes (/health, /ready) and metrics stay open.
 *
 * A token verified recently is answered from the verifier's cache synchronously, so an
 * authenticated request stays on the synchronous cache-hit path; only a token not yet seen waits
 * for its signature check.
 */
// The error class alone: with auth off the server loads no JWT verifier (nor jose, nor gRPC).
import { AuthError } from '../auth/auth-error.js';
import type { JwtVerifier } from '../auth/index.js';
import { ErrorCode } from '../errors.js';
import { httpError, type HttpError } from './http-errors.js';

/** Why a request is refused: the 401 to send. */
export type BearerRefusal = HttpError;

/** The outcome of a check: undefined (admitted), the refusal, or a promise of either. */
export type BearerOutcome = BearerRefusal | undefined | Promise<BearerRefusal | undefined>;

const REALM = 'Bearer realm="tidepool"';

function refusal(why: string, tokenGiven: boolean): BearerRefusal {
  const challenge = tokenGiven ? `${REALM}, error="invalid_token", error_description="${why.replace(/["\\]/g, '')}"` : REALM;
  return httpError(ErrorCode.Unauthenticated, `unauthenticated: ${why}`, [['WWW-Authenticate', challenge]]);
}

const MISSING = refusal('missing Authorization header (expected "Bearer <jwt>")', false);
const NOT_BEARER = refusal('Authorization header is not "Bearer <jwt>"', false);

/**
 * Checks the `Authorization` header's value ('' when absent). Synchronous for a missing or
 * malformed header and for a token the verifier has seen verify; a promise otherwise (never rejects).
 */
/** The subject of the header's bearer token when that token has verified recently; else undefined. */
export function verifiedSubjectOf(verifier: JwtVerifier, authorization: string): string | undefined {
  if (authorization === '') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization.trim());
  return match === null ? undefined : verifier.verifiedSubject(match[1]!);
}

export function checkBearer(verifier: JwtVerifier, authorization: string): BearerOutcome {
  if (authorization === '') return MISSING;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization.trim());
  if (match === null) return NOT_BEARER;
  const token = match[1]!;
  if (verifier.isVerified(token)) return undefined;
  return verifier.verify(token).then(
    () => undefined,
    (err: unknown) => refusal(err instanceof AuthError ? err.message : 'token invalid', true),
  );
}
