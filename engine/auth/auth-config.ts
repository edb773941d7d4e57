/**
 * The JWT bearer authentication settings shared by the gRPC services (docs/architecture.md §3): one
 * set of keys, environment variables and flags spread into the quote, engine, aggregator and
 * external quote schemas (`auth.*`), and the checks run when the settings load.
 *
 * - `auth.mode` (TIDEPOOL_AUTH, --auth): `auto` (default) is on unless the service binds a
 *   loopback host (127.0.0.0/8, ::1, localhost); `on` and `off` force it.
 * - `auth.jwtSecret` (TIDEPOOL_JWT_SECRET, --jwt-secret; prefer the variable: a flag shows in `ps`):
 *   HS256 shared secret, at least 32 bytes.
 * - `auth.jwtPublicKeyFile` (TIDEPOOL_JWT_PUBLIC_KEY_FILE, --jwt-public-key-file): EdDSA (Ed25519)
 *   public key, PEM SPKI.
 * - `auth.jwtAudience` / `auth.jwtIssuer` (TIDEPOOL_JWT_AUDIENCE / TIDEPOOL_JWT_ISSUER): when set,
 *   tokens must carry that `aud` / `iss`.
 */
import { isIP } from 'node:net';

import { setting } from '../config/index.js';
import { oneOf, str } from '../config/index.js';

export const AUTH_MODES = ['auto', 'on', 'off'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

/** Least length of an HS256 secret, in bytes (RFC 7518 §3.2: a key at least as long as the hash). */
export const MIN_SECRET_BYTES = 32;

export const authSchema = {
  'auth.mode': setting({ description: 'JWT bearer auth on the gRPC services: auto (on unless bound to loopback), on, off', parse: oneOf(AUTH_MODES), default: 'auto' as AuthMode, env: 'TIDEPOOL_AUTH', flag: 'auth' }),
  'auth.jwtSecret': setting({ description: `HS256 shared secret of the JWTs (at least ${MIN_SECRET_BYTES} bytes; empty: none)`, parse: str(), default: '', env: 'TIDEPOOL_JWT_SECRET', flag: 'jwt-secret', secret: true }),
  'auth.jwtPublicKeyFile': setting({ description: 'EdDSA (Ed25519) public key of the JWTs, PEM SPKI file (empty: none)', parse: str(), default: '', env: 'TIDEPOOL_JWT_PUBLIC_KEY_FILE', flag: 'jwt-public-key-file' }),
  'auth.jwtAudience': setting({ description: 'required JWT `aud` (empty: not checked)', parse: str(), default: '', env: 'TIDEPOOL_JWT_AUDIENCE', flag: 'jwt-audience' }),
  'auth.jwtIssuer': setting({ description: 'required JWT `iss` (empty: not checked)', parse: str(), default: '', env: 'TIDEPOOL_JWT_ISSUER', flag: 'jwt-issuer' }),
};

export const AUTH_KEYS = Object.keys(authSchema) as (keyof typeof authSchema)[];

export interface AuthSettings {
  'auth.mode': AuthMode;
  'auth.jwtSecret': string;
  'auth.jwtPublicKeyFile': string;
  'auth.jwtAudience': string;
  'auth.jwtIssuer': string;
}

/** The auth settings of a service that has none configured (tests, embedders): auto. */
export const DEFAULT_AUTH_SETTINGS: AuthSettings = { 'auth.mode': 'auto', 'auth.jwtSecret': '', 'auth.jwtPublicKeyFile': '', 'auth.jwtAudience': '', 'auth.jwtIssuer': '' };

/** 127.0.0.0/8, ::1 (also as ::ffff:127.x.y.z) and localhost, with or without brackets. */
export function isLoopbackHost(host: string): boolean {
  const bare = (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host).toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^(0{0,4}:){7}0{0,3}1$/.test(bare) || /^::ffff:127\./.test(bare);
  return false;
}

/** Whether auth is on for a server bound to `host`. */
export function authEnabled(mode: AuthMode, host: string): boolean {
  if (mode === 'on') return true;
  if (mode === 'off') return false;
  return !isLoopbackHost(host);
}

/**
 * The problems of the auth settings of a server bound to `host` (the setting `hostSetting`), one
 * line each naming the setting; empty when fine.
 */
export function authIssues(v: AuthSettings, host: string, hostSetting = 'host'): string[] {
  const issues: string[] = [];
  const secret = v['auth.jwtSecret'];
  if (secret !== '' && Buffer.byteLength(secret, 'utf8') < MIN_SECRET_BYTES) {
    issues.push(`auth.jwtSecret: the HS256 secret (TIDEPOOL_JWT_SECRET) must be at least ${MIN_SECRET_BYTES} bytes`);
  }
  if (authEnabled(v['auth.mode'], host) && secret === '' && v['auth.jwtPublicKeyFile'] === '') {
    const why = v['auth.mode'] === 'on' ? 'auth.mode is on' : `auth.mode is auto and ${hostSetting} ${host} is not loopback`;
    issues.push(`auth.mode: ${why}, but neither auth.jwtSecret (TIDEPOOL_JWT_SECRET) nor auth.jwtPublicKeyFile (TIDEPOOL_JWT_PUBLIC_KEY_FILE) is set; set one, or TIDEPOOL_AUTH=off`);
  }
  return issues;
}
