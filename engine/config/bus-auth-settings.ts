/**
 * The bus credentials and TLS settings every service that connects to NATS spreads into its schema
 * next to `bus.servers` (engine/bus/bus-auth.ts turns them into the client's options).
 */
import { setting } from './loader.js';
import type { ConfigValues } from './loader.js';
import { bool, str } from './setting-types.js';

export const busAuthSchema = {
  'bus.token': setting({ description: 'NATS token (authorization token); not with bus.user', parse: str(), default: '', env: 'NATS_TOKEN', secret: true }),
  'bus.user': setting({ description: 'NATS user (with bus.password)', parse: str(), default: '', env: 'NATS_USER', flag: 'bus-user' }),
  'bus.password': setting({ description: 'NATS password of bus.user', parse: str(), default: '', env: 'NATS_PASSWORD', secret: true }),
  'bus.credsFile': setting({ description: 'NATS credentials file (JWT and NKey seed, as nsc writes it)', parse: str(), default: '', env: 'NATS_CREDS_FILE', flag: 'bus-creds-file' }),
  'bus.tls': setting({ description: 'require TLS to the bus (implied by a tls:// server or any bus.tls* file)', parse: bool(), default: false, env: 'NATS_TLS', flag: 'bus-tls' }),
  'bus.tlsCaFile': setting({ description: 'PEM file of the CA that signed the bus servers\' certificates (a private CA)', parse: str(), default: '', env: 'NATS_TLS_CA_FILE', flag: 'bus-tls-ca-file' }),
  'bus.tlsCertFile': setting({ description: 'PEM client certificate for mutual TLS (with bus.tlsKeyFile)', parse: str(), default: '', env: 'NATS_TLS_CERT_FILE', flag: 'bus-tls-cert-file' }),
  'bus.tlsKeyFile': setting({ description: 'PEM private key of bus.tlsCertFile', parse: str(), default: '', env: 'NATS_TLS_KEY_FILE', flag: 'bus-tls-key-file' }),
};

export type BusAuthValues = ConfigValues<typeof busAuthSchema>;

/** The bus credentials and TLS of a service; every field optional (none: no auth, plain TCP). */
export interface BusAuth {
  token?: string;
  user?: string;
  password?: string;
  credsFile?: string;
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

/** The BusAuth of a service's settings (those of `busAuthSchema`, in any schema that spreads it). */
export function busAuthOf(values: Partial<BusAuthValues>, servers: readonly string[] = []): BusAuth {
  const auth: BusAuth = {};
  if (values['bus.token']) auth.token = values['bus.token'];
  if (values['bus.user']) auth.user = values['bus.user'];
  if (values['bus.password']) auth.password = values['bus.password'];
  if (values['bus.credsFile']) auth.credsFile = values['bus.credsFile'];
  const tlsFiles = {
    ...(values['bus.tlsCaFile'] ? { caFile: values['bus.tlsCaFile'] } : {}),
    ...(values['bus.tlsCertFile'] ? { certFile: values['bus.tlsCertFile'] } : {}),
    ...(values['bus.tlsKeyFile'] ? { keyFile: values['bus.tlsKeyFile'] } : {}),
  };
  if (values['bus.tls'] === true || Object.keys(tlsFiles).length > 0 || servers.some((s) => s.startsWith('tls://'))) auth.tls = tlsFiles;
  return auth;
}

