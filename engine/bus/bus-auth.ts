/**
 * How every service authenticates to the message bus and secures the connection: a token, a user
 * and password, or a NATS credentials file (JWT + NKey seed, as `nsc` writes them), and TLS (a CA
 * to trust a private server certificate, a client certificate and key for mutual TLS, or plain
 * "require TLS" against a publicly trusted certificate). The settings are the same in every
 * service's schema (`busAuthSchema` of engine/config, spread next to `bus.servers`); `busAuthOf`
 * reads them and `natsConnectOptions` turns them into the nats client's options.
 *
 * Misconfigurations are refused before connecting (TP_ERR_CONFIG_INVALID: a token together with a
 * user, a user without a password, a file that cannot be read); credentials the server rejects are
 * TP_ERR_BUS_AUTH (`busAuthError`), never retried: retrying a wrong password forever hides it.
 * Secrets never appear in messages or logs.
 */
import { readFileSync } from 'node:fs';

import { credsAuthenticator, ErrorCode as NatsErrorCode, type ConnectionOptions, type NatsError } from 'nats';

import type { BusAuth } from '../config/index.js';
import { ErrorCode, TpError } from '../errors.js';

function invalid(message: string, setting: string): TpError {
  return new TpError(ErrorCode.ConfigInvalid, message, { context: { setting } });
}

function readable(path: string, setting: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw invalid(`${setting}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, setting);
  }
}

/**
 * The nats client options for `auth`. Refuses combinations the server cannot mean
 * (TP_ERR_CONFIG_INVALID) and files it cannot read; reads the credentials file once.
 */
export function natsConnectOptions(auth: BusAuth): Partial<ConnectionOptions> {
  const methods = [auth.token !== undefined, auth.user !== undefined || auth.password !== undefined, auth.credsFile !== undefined].filter(Boolean).length;
  if (methods > 1) throw invalid('bus credentials: give one of bus.token (NATS_TOKEN), bus.user + bus.password (NATS_USER, NATS_PASSWORD) or bus.credsFile (NATS_CREDS_FILE)', 'bus.token');
  if ((auth.user === undefined) !== (auth.password === undefined)) throw invalid('bus.user (NATS_USER) and bus.password (NATS_PASSWORD) go together', auth.user === undefined ? 'bus.user' : 'bus.password');
  const options: Partial<ConnectionOptions> = {};
  if (auth.token !== undefined) options.token = auth.token;
  if (auth.user !== undefined && auth.password !== undefined) {
    options.user = auth.user;
    options.pass = auth.password;
  }
  if (auth.credsFile !== undefined) {
    const creds = readable(auth.credsFile, 'bus.credsFile');
    if (!creds.includes('BEGIN NATS USER JWT') || !creds.includes('BEGIN USER NKEY SEED')) throw invalid(`bus.credsFile: ${auth.credsFile} is not a NATS credentials file (a user JWT and an NKey seed)`, 'bus.credsFile');
    options.authenticator = credsAuthenticator(new TextEncoder().encode(creds));
  }
  if (auth.tls !== undefined) {
    const { caFile, certFile, keyFile } = auth.tls;
    if ((certFile === undefined) !== (keyFile === undefined)) throw invalid('bus.tlsCertFile (NATS_TLS_CERT_FILE) and bus.tlsKeyFile (NATS_TLS_KEY_FILE) go together', 'bus.tlsCertFile');
    options.tls = {
      ...(caFile === undefined ? {} : { ca: readable(caFile, 'bus.tlsCaFile') }),
      ...(certFile === undefined ? {} : { cert: readable(certFile, 'bus.tlsCertFile') }),
      ...(keyFile === undefined ? {} : { key: readable(keyFile, 'bus.tlsKeyFile') }),
    };
  }
  return options;
}

const AUTH_CODES: ReadonlySet<string> = new Set([NatsErrorCode.AuthorizationViolation, NatsErrorCode.AuthenticationExpired, NatsErrorCode.BadAuthentication, NatsErrorCode.AuthenticationTimeout]);

/**
 * TP_ERR_BUS_AUTH for a connect error that is the server refusing the credentials (or TLS the
 * client asked for failing), undefined for anything else (a server down is retried).
 */
export function busAuthError(err: unknown, servers: readonly string[]): TpError | undefined {
  const code = (err as Partial<NatsError> | undefined)?.code;
  const message = err instanceof Error ? err.message : String(err);
  const where = servers.map(redactServer).join(',');
  if (code !== undefined && AUTH_CODES.has(code)) {
    return new TpError(ErrorCode.BusAuth, `the bus (${where}) refused the credentials (${code}): check bus.token / bus.user + bus.password / bus.credsFile`, { context: { servers: where, natsCode: code }, cause: err });
  }
  if (code === NatsErrorCode.Tls || /certificate|self[- ]signed|TLS|SSL/i.test(message)) {
    return new TpError(ErrorCode.BusAuth, `TLS to the bus (${where}) failed: ${message.replace(/\s+/g, ' ').slice(0, 200)} (bus.tls, bus.tlsCaFile)`, { context: { servers: where, natsCode: code ?? 'TLS' }, cause: err });
  }
  return undefined;
}

/** A server URL without user info. */
export function redactServer(server: string): string {
  try {
    const u = new URL(server.includes('://') ? server : `nats://${server}`);
    u.username = '';
    u.password = '';
    return server.includes('://') ? u.toString().replace(/\/$/, '') : u.host;
  } catch {
    return '(bus server)';
  }
}
