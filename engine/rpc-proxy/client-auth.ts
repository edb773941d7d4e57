/**
 * Who may call the proxy. The proxy forwards `sendTransaction` and every other method under the
 * operator's upstream keys, so off loopback it must know its callers: a JWT bearer token (the
 * engine's auth settings, engine/auth) or one of the operator's API keys (`x-api-key` header, or
 * `api-key` in the query for WebSocket clients that cannot set headers).
 *
 * `auth.mode` auto (default) turns it on unless the proxy binds a loopback host, as the quote
 * services do; on / off force it. On without any key or JWT setting is a configuration error
 * naming the settings: the proxy never runs open off loopback by accident.
 */
import { timingSafeEqual } from 'node:crypto';

import { authEnabled, bearerTokenOfHeader, verifierFromSettings, type AuthSettings, type JwtVerifier } from '../auth/index.js';
import { ErrorCode, TpError } from '../errors.js';

export interface ProxyAuthSettings extends AuthSettings {
  'auth.apiKeys': readonly string[];
}

/** What a request presents: its Authorization header and its API key (header or query), as read. */
export interface Credentials {
  authorization: string;
  apiKey: string;
}

/**
 * Resolves when the credentials are good, with the caller's identity for its rate limit: `key:N`
 * for the operator's N-th API key, `sub:SUBJECT` for a JWT with a subject, undefined for a JWT
 * without one (the caller is then known by its address). Never the credential itself. Rejects with
 * TP_ERR_UNAUTHENTICATED saying why (never echoing them).
 */
export type ProxyAuthorizer = (credentials: Credentials) => Promise<string | undefined>;

/** Problems of the settings for a proxy bound to `host`; empty when fine. */
export function proxyAuthIssues(v: ProxyAuthSettings, host: string): string[] {
  if (!authEnabled(v['auth.mode'], host)) return [];
  if (v['auth.apiKeys'].length > 0 || v['auth.jwtSecret'] !== '' || v['auth.jwtPublicKeyFile'] !== '') return [];
  const why = v['auth.mode'] === 'on' ? 'auth.mode is on' : `host ${host} is not loopback, so auth is on (auth.mode auto)`;
  return [`${why}, but no caller can be recognised: set RPC_PROXY_API_KEYS (auth.apiKeys), TIDEPOOL_JWT_SECRET or TIDEPOOL_JWT_PUBLIC_KEY_FILE, or TIDEPOOL_AUTH=off to run it open`];
}

/** The authorizer of a proxy bound to `host`: undefined when auth is off for it. */
export function createProxyAuthorizer(v: ProxyAuthSettings, host: string): ProxyAuthorizer | undefined {
  if (!authEnabled(v['auth.mode'], host)) return undefined;
  const keys = v['auth.apiKeys'].map((k) => Buffer.from(k));
  const verifier: JwtVerifier | undefined = v['auth.jwtSecret'] !== '' || v['auth.jwtPublicKeyFile'] !== '' ? verifierFromSettings(v) : undefined;
  return async ({ authorization, apiKey }) => {
    if (apiKey !== '') {
      const given = Buffer.from(apiKey);
      const index = keys.findIndex((k) => k.length === given.length && timingSafeEqual(k, given));
      if (index >= 0) return `key:${index}`;
      throw new TpError(ErrorCode.Unauthenticated, 'unauthenticated: unknown API key', { context: { credential: 'api-key' } });
    }
    if (verifier === undefined) throw new TpError(ErrorCode.Unauthenticated, 'unauthenticated: missing API key (x-api-key header or api-key query parameter)', { context: { credential: 'api-key' } });
    try {
      const token = bearerTokenOfHeader(authorization === '' ? undefined : authorization);
      await verifier.verify(token);
      const subject = verifier.verifiedSubject(token);
      return subject === undefined || subject === '' ? undefined : `sub:${subject}`;
    } catch (err) {
      throw new TpError(ErrorCode.Unauthenticated, `unauthenticated: ${err instanceof TpError ? err.message : 'token invalid'}`, { context: { credential: 'bearer' } });
    }
  };
}
