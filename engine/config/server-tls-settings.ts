/**
 * TLS on a service's own ports (the quote service's HTTP and gRPC ports): a PEM certificate chain
 * and its private key. Both or neither; files that cannot be read, or are not PEM, are refused at
 * start (TP_ERR_CONFIG_INVALID naming the setting, never the key's contents).
 */
import { readFileSync } from 'node:fs';

import { ErrorCode, TpError } from '../errors.js';
import { setting, type ConfigValues } from './loader.js';
import { str } from './setting-types.js';

export const serverTlsSchema = {
  'tls.certFile': setting({ description: 'PEM certificate (chain) the HTTP and gRPC ports serve TLS with (with tls.keyFile); empty = plain TCP', parse: str(), default: '', env: 'TLS_CERT_FILE', flag: 'tls-cert-file' }),
  'tls.keyFile': setting({ description: 'PEM private key of tls.certFile', parse: str(), default: '', env: 'TLS_KEY_FILE', flag: 'tls-key-file' }),
};

export type ServerTlsValues = ConfigValues<typeof serverTlsSchema>;

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
  return {
    certFile,
    keyFile,
    cert: pem(certFile, 'tls.certFile', /-----BEGIN CERTIFICATE-----/),
    key: pem(keyFile, 'tls.keyFile', /-----BEGIN [A-Z ]*PRIVATE KEY-----/),
  };
}
