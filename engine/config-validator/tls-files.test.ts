/**
 * validate-config's check of the services' TLS files (tlsCertFile, tlsKeyFile, upstreamTlsCaFile):
 * read as the services read them at start, with each failure at the setting's path, against
 * certificates openssl makes for the test.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeSelfSignedCert, OPENSSL, type SelfSignedCert } from '../config/testing/self-signed-cert.js';
import { GENERATED_DEFAULTS, GENERATED_WORKERS, freshWalletSecret } from './generate-config.js';
import { ValidationExit, formatReport, validateConfig } from './validate-config.js';

const dir = mkdtempSync(join(tmpdir(), 'tp-validate-tls-'));
let cert: SelfSignedCert;
let other: SelfSignedCert;
const base = { ...GENERATED_DEFAULTS, blockEngineUuid: '123e4567-e89b-12d3-a456-426614174000', treasureWallet: freshWalletSecret(), workerWallets: Array.from({ length: GENERATED_WORKERS }, freshWalletSecret) };

beforeAll(() => {
  if (!OPENSSL) return;
  cert = makeSelfSignedCert(dir, 'server');
  other = makeSelfSignedCert(dir, 'other');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const validate = (extra: object) => validateConfig({ ...base, ...extra }, { offline: true });

describe.skipIf(!OPENSSL)('validate-config with TLS files', () => {
  it('accepts a readable certificate and its own key, and a readable upstream CA', async () => {
    const report = await validate({ tlsCertFile: cert.certFile, tlsKeyFile: cert.keyFile, upstreamTlsCaFile: other.certFile });
    expect(report.violations).toEqual([]);
    expect(report.exitCode).toBe(ValidationExit.Valid);
  });

  it('refuses a key that is not the certificate\'s, at /tlsKeyFile', async () => {
    const report = await validate({ tlsCertFile: cert.certFile, tlsKeyFile: other.keyFile });
    expect(report.exitCode).toBe(ValidationExit.Invalid);
    expect(report.violations).toEqual([{ path: '/tlsKeyFile', message: expect.stringContaining('is not the private key of tls.certFile') }]);
  });

  it('refuses files that are missing, unreadable or not PEM, naming the setting and never printing their contents', async () => {
    const missing = await validate({ tlsCertFile: cert.certFile, tlsKeyFile: join(dir, 'nope.key') });
    expect(missing.violations).toEqual([{ path: '/tlsKeyFile', message: expect.stringMatching(/^tls\.keyFile: cannot read .*nope\.key \(ENOENT\)/) }]);
    const alone = await validate({ tlsCertFile: cert.certFile });
    expect(alone.violations).toEqual([{ path: '/tlsKeyFile', message: expect.stringContaining('tls.keyFile (TLS_KEY_FILE) is not set') }]);
    const junk = join(dir, 'junk.pem');
    writeFileSync(junk, 'secret-bytes, not a certificate');
    const notPem = await validate({ tlsCertFile: junk, tlsKeyFile: cert.keyFile, upstreamTlsCaFile: join(dir, 'no-ca.pem') });
    expect(notPem.violations.map((v) => v.path)).toEqual(['/tlsCertFile', '/upstreamTlsCaFile']);
    expect(formatReport(notPem)).not.toContain('secret-bytes');
  });
});
