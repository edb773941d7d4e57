/**
 * Verifies JWT bearer tokens with `jose`: HS256 against a shared secret and/or EdDSA (Ed25519)
 * against a public key; `exp` and `nbf` with a small clock tolerance; `aud` and `iss` when
 * configured. The algorithm comes from the token's header but must be one this verifier has a key
 * for (no `none`, no key confusion: the secret only ever verifies HS256, the public key EdDSA).
 *
 * Verified tokens are remembered (LRU keyed by the token, bounded) until their `exp`, and at most
 * CACHE_TTL_MS, so a client reusing its token costs one map lookup per call after the first.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { errors as joseErrors, jwtVerify, type JWTHeaderParameters } from 'jose';
import { LRUCache } from 'lru-cache';

import { ErrorCode, TpError } from '../errors.js';
import type { AuthSettings } from './auth-config.js';
import { AuthError } from './auth-error.js';

/** Seconds of clock skew tolerated on `exp` and `nbf`. */
export const CLOCK_TOLERANCE_S = 5;
/** Longest a verified token is trusted without verifying it again. */
export const CACHE_TTL_MS = 60_000;
/** Verified tokens remembered, at most. */
export const CACHE_MAX_TOKENS = 1024;

export interface JwtVerifierOptions {
  /** HS256 secret (UTF-8), at least 32 bytes. */
  secret?: string | undefined;
  /** Ed25519 public key. */
  publicKey?: KeyObject | undefined;
  audience?: string | undefined;
  issuer?: string | undefined;
  now?: () => number;
}

interface VerifiedToken {
  readonly until: number;
  readonly subject: string;
}

export class JwtVerifier {
  private readonly hmacKey: Uint8Array | undefined;
  private readonly publicKey: KeyObject | undefined;
  private readonly options: JwtVerifierOptions;
  private readonly now: () => number;
  private readonly algorithms: string[];
  /** Verified tokens → the time (ms) they stop being trusted, and their `sub` claim ('' without one). */
  private readonly verified = new LRUCache<string, VerifiedToken>({ max: CACHE_MAX_TOKENS });

  constructor(options: JwtVerifierOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.hmacKey = options.secret ? new TextEncoder().encode(options.secret) : undefined;
    this.publicKey = options.publicKey;
    this.algorithms = [...(this.hmacKey ? ['HS256'] : []), ...(this.publicKey ? ['EdDSA'] : [])];
    if (this.algorithms.length === 0) throw new TpError(ErrorCode.ConfigInvalid, 'JWT verifier: neither a secret nor a public key');
  }

  /** True when `token` was verified recently and has not expired since. */
  isVerified(token: string): boolean {
    return this.verifiedEntry(token) !== undefined;
  }

  /**
   * The `sub` claim of a token verified recently and not expired since ('' when it has none), or
   * undefined when the token is not (yet) verified: what a client cannot forge, for keying limits.
   */
  verifiedSubject(token: string): string | undefined {
    return this.verifiedEntry(token)?.subject;
  }

  private verifiedEntry(token: string): VerifiedToken | undefined {
    const entry = this.verified.get(token);
    if (entry === undefined) return undefined;
    if (entry.until > this.now()) return entry;
    this.verified.delete(token);
    return undefined;
  }

  /** Resolves when `token` verifies; rejects with AuthError saying why not. */
  async verify(token: string): Promise<void> {
    if (this.isVerified(token)) return;
    let exp: number | undefined;
    let subject: string;
    try {
      const { payload } = await jwtVerify(token, (header: JWTHeaderParameters) => this.keyFor(header), {
        algorithms: this.algorithms,
        clockTolerance: CLOCK_TOLERANCE_S,
        currentDate: new Date(this.now()),
        ...(this.options.audience ? { audience: this.options.audience } : {}),
        ...(this.options.issuer ? { issuer: this.options.issuer } : {}),
      });
      exp = payload.exp;
      subject = typeof payload.sub === 'string' ? payload.sub : '';
    } catch (err) {
      throw new AuthError(reason(err, this.algorithms), { cause: err });
    }
    const now = this.now();
    const until = Math.min(now + CACHE_TTL_MS, exp === undefined ? Infinity : exp * 1000 + CLOCK_TOLERANCE_S * 1000);
    if (until > now) this.verified.set(token, { until, subject });
  }

  private keyFor(header: JWTHeaderParameters): Uint8Array | KeyObject {
    if (header.alg === 'HS256' && this.hmacKey) return this.hmacKey;
    if (header.alg === 'EdDSA' && this.publicKey) return this.publicKey;
    throw new AuthError(`token algorithm ${JSON.stringify(header.alg)} is not accepted (accepted: ${this.algorithms.join(', ')})`);
  }
}

function reason(err: unknown, algorithms: readonly string[]): string {
  if (err instanceof AuthError) return err.message;
  if (err instanceof joseErrors.JWTExpired) return 'token expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed) return `token claim ${err.claim} invalid: ${err.reason}`;
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'token signature invalid';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return `token algorithm not accepted (accepted: ${algorithms.join(', ')})`;
  if (err instanceof joseErrors.JWSInvalid || err instanceof joseErrors.JWTInvalid) return 'token malformed';
  return 'token invalid';
}

/** Reads an Ed25519 public key (PEM SPKI). Throws TP_ERR_CONFIG_INVALID naming `setting`. */
export function readPublicKeyFile(path: string, setting = 'auth.jwtPublicKeyFile'): KeyObject {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    throw new TpError(ErrorCode.ConfigInvalid, `${setting}: cannot read ${path}: ${(err as Error).message}`, { cause: err, context: { setting } });
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch (err) {
    throw new TpError(ErrorCode.ConfigInvalid, `${setting}: ${path} is not a PEM public key: ${(err as Error).message}`, { cause: err, context: { setting } });
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new TpError(ErrorCode.ConfigInvalid, `${setting}: ${path} holds a ${key.asymmetricKeyType ?? 'non-asymmetric'} key; EdDSA needs an Ed25519 public key`, { context: { setting } });
  }
  return key;
}

/** The verifier the settings describe (secret and/or key file). */
export function verifierFromSettings(v: AuthSettings): JwtVerifier {
  return new JwtVerifier({
    secret: v['auth.jwtSecret'] || undefined,
    publicKey: v['auth.jwtPublicKeyFile'] ? readPublicKeyFile(v['auth.jwtPublicKeyFile']) : undefined,
    audience: v['auth.jwtAudience'] || undefined,
    issuer: v['auth.jwtIssuer'] || undefined,
  });
}
