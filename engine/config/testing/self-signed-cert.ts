/**
 * A self-signed certificate and key for TLS tests (CN=localhost, SANs 127.0.0.1 and localhost),
 * made by openssl in a directory the caller removes. `OPENSSL` says whether openssl is on PATH;
 * tests that need a certificate skip without it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { ErrorCode, TpError } from '../../errors.js';

export const OPENSSL = spawnSync('openssl', ['version']).status === 0;

export interface SelfSignedCert {
  certFile: string;
  keyFile: string;
  /** The certificate (PEM): what a client trusts to accept it. */
  cert: string;
}

/** Writes `<name>-cert.pem` and `<name>-key.pem` into `dir`. */
export function makeSelfSignedCert(dir: string, name = 'server'): SelfSignedCert {
  const certFile = join(dir, `${name}-cert.pem`);
  const keyFile = join(dir, `${name}-key.pem`);
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
  if (made.status !== 0) throw new TpError(ErrorCode.Io, `openssl could not make a test certificate in ${dir}`, { context: { path: dir } });
  return { certFile, keyFile, cert: readFileSync(certFile, 'utf8') };
}
