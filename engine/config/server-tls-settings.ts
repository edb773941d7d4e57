/**
 * TLS on a service's own ports (the quote service's and the aggregator's HTTP and gRPC ports, the
 * RPC proxy's HTTP/WS port): a PEM certificate chain and its private key. Both or neither; files
 * that cannot be read, are not PEM, or do not belong together are refused at start
 * (TP_ERR_CONFIG_INVALID naming the setting, never the key's contents).
 *
 * And TLS towards the gRPC upstreams a service calls (the aggregator's local and external quote
 * services), per upstream: an address with a scheme says it (`https://` or `grpcs://` TLS,
 * `http://` or `grpc://` plaintext); a bare `host:port` follows `tls.upstream`.
 * `tls.upstreamCaFile` names the CA (or self-signed certificate) the TLS upstreams are checked
 * against; without it the system roots are trusted.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { ErrorCode, TpError } from '../errors.js';
import { setting, type ConfigValues } from './loader.js';
import { bool, str } from './setting-types.js';
import { parseUpstreamAddress, type UpstreamAddress } from './upstream-address.js';

export const serverTlsSchema = {
  'tls.certFile': setting({ description: 'PEM certificate (chain) the service\'s HTTP, WebSocket and gRPC ports serve TLS with (with tls.keyFile; metrics ports stay plain); empty = plain TCP', parse: str(), default: '', env: 'TLS_CERT_FILE', flag: 'tls-cert-file' }),
  'tls.keyFile': setting({ description: 'PEM private key of tls.certFile', parse: str(), default: '', env: 'TLS_KEY_FILE', flag: 'tls-key-file' }),
};

export type ServerTlsValues = ConfigValues<typeof serverTlsSchema>;

export const upstreamTlsSchema = {
  'tls.upstream': setting({ description: 'connect over TLS to the gRPC upstreams (local and external quote services) whose address has no scheme; an address with https:// or grpcs:// is TLS, with http:// or grpc:// plaintext, whatever this says', parse: bool(), default: false, env: 'UPSTREAM_TLS', flag: 'upstream-tls' }),
  'tls.upstreamCaFile': setting({ description: 'PEM CA (or self-signed certificate) the TLS upstreams\' certificates are checked against; empty = the system roots', parse: str(), default: '', env: 'UPSTREAM_TLS_CA_FILE', flag: 'upstream-tls-ca-file' }),
};

export type UpstreamTlsValues = ConfigValues<typeof upstreamTlsSchema>;

/** How a client reaches its upstreams: undefined = plaintext; else TLS trusting `ca` (PEM) or the system roots. */
export interface UpstreamTls {
  ca?: string | undefined;
}

/** A server's certificate and key, read (PEM text), with the files they came from. */
export interface ServerTls {
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

function pem(path: string, setting: string, kind: RegExp): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new TpError(ErrorCode.ConfigInvalid, `${setting}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { context: { setting } });
  }
  if (!kind.test(text)) throw new TpError(ErrorCode.ConfigInvalid, `${setting}: ${path} is not a PEM file of the expected kind`, { context: { setting } });
  return text;
}

/** The TLS of `values`, or undefined for plain TCP. */
export function serverTlsOf(values: Partial<ServerTlsValues>): ServerTls | undefined {
  const certFile = values['tls.certFile'] ?? '';
  const keyFile = values['tls.keyFile'] ?? '';
  if (certFile === '' && keyFile === '') return undefined;
  if (certFile === '' || keyFile === '') {
    const missing = certFile === '' ? 'tls.certFile (TLS_CERT_FILE)' : 'tls.keyFile (TLS_KEY_FILE)';
    throw new TpError(ErrorCode.ConfigInvalid, `TLS needs a certificate and its key: ${missing} is not set`, { context: { setting: certFile === '' ? 'tls.certFile' : 'tls.keyFile' } });
  }
  const cert = pem(certFile, 'tls.certFile', /-----BEGIN CERTIFICATE-----/);
  const key = pem(keyFile, 'tls.keyFile', /-----BEGIN [A-Z ]*PRIVATE KEY-----/);
  let matches: boolean;
  try {
    matches = new X509Certificate(cert).checkPrivateKey(createPrivateKey(key));
  } catch (err) {
    const bad = err instanceof Error && /key/i.test(err.message) ? 'tls.keyFile' : 'tls.certFile';
    throw new TpError(ErrorCode.ConfigInvalid, `${bad}: ${bad === 'tls.keyFile' ? keyFile : certFile} cannot be parsed`, { context: { setting: bad } });
  }
  if (!matches) throw new TpError(ErrorCode.ConfigInvalid, `tls.keyFile: ${keyFile} is not the private key of tls.certFile ${certFile}`, { context: { setting: 'tls.keyFile' } });
  return { certFile, keyFile, cert, key };
}

/**
 * The upstream TLS of `values` (CA file read) for upstreams without a scheme, or undefined for
 * plaintext. A CA file with `tls.upstream` off is refused: nothing would use it.
 */
export function upstreamTlsOf(values: Partial<UpstreamTlsValues>): UpstreamTls | undefined {
  const caFile = values['tls.upstreamCaFile'] ?? '';
  if (values['tls.upstream'] !== true) {
    if (caFile !== '') throw new TpError(ErrorCode.ConfigInvalid, 'tls.upstreamCaFile (UPSTREAM_TLS_CA_FILE) is set but tls.upstream (UPSTREAM_TLS) is not true', { context: { setting: 'tls.upstreamCaFile' } });
    return undefined;
  }
  return caFile === '' ? {} : { ca: pem(caFile, 'tls.upstreamCaFile', /-----BEGIN CERTIFICATE-----/) };
}

/** How to reach one upstream: where, and with TLS (trusting `ca` or the system roots) or not (undefined). */
export interface UpstreamTarget {
  hostPort: string;
  tls: UpstreamTls | undefined;
}

/**
 * Where and how to reach each of `addresses` (setting name to address): TLS when its scheme says
 * so, or, without a scheme, when `tls.upstream` is on. The CA file is read once, and refused when
 * no upstream uses TLS (it would be ignored). Throws TpError(ConfigInvalid) naming the setting.
 */
export function upstreamTargetsOf<K extends string>(values: Partial<UpstreamTlsValues>, addresses: Record<K, string>): Record<K, UpstreamTarget> {
  const split = {} as Record<K, UpstreamAddress>;
  for (const name of Object.keys(addresses) as K[]) {
    const parsed = parseUpstreamAddress(addresses[name]);
    if (typeof parsed === 'string') throw new TpError(ErrorCode.ConfigInvalid, `${name}: ${parsed}, got ${JSON.stringify(addresses[name])}`, { context: { setting: name } });
    split[name] = parsed;
  }
  const byDefault = values['tls.upstream'] === true;
  const usesTls = (a: UpstreamAddress): boolean => a.tls ?? byDefault;
  const names = Object.keys(split) as K[];
  const caFile = values['tls.upstreamCaFile'] ?? '';
  if (caFile !== '' && !names.some((n) => usesTls(split[n]))) {
    throw new TpError(
      ErrorCode.ConfigInvalid,
      `tls.upstreamCaFile (UPSTREAM_TLS_CA_FILE) is set but no upstream uses TLS: tls.upstream (UPSTREAM_TLS) is off and no address (${names.join(', ')}) starts with https:// or grpcs://`,
      { context: { setting: 'tls.upstreamCaFile' } },
    );
  }
  const tls: UpstreamTls | undefined = caFile === '' ? {} : { ca: pem(caFile, 'tls.upstreamCaFile', /-----BEGIN CERTIFICATE-----/) };
  const targets = {} as Record<K, UpstreamTarget>;
  for (const name of names) targets[name] = { hostPort: split[name].hostPort, tls: usesTls(split[name]) ? tls : undefined };
  return targets;
}
