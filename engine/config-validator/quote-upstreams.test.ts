/**
 * validate-config and the aggregator's quote upstreams (localQuoteAddr, externalQuoteAddr,
 * upstreamTls, upstreamTlsCaFile) over real sockets: one upstream serving TLS with a certificate
 * openssl makes for the test, the other plaintext. Each is reached over TLS or not as its address's
 * scheme says (else upstreamTls), as the aggregator would at start; a CA file no upstream uses is a
 * violation at its path.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FakeUpstream } from '../aggregator/testing.js';
import { makeSelfSignedCert, OPENSSL, type SelfSignedCert } from '../config/testing/self-signed-cert.js';
import { validateConfig } from './validate-config.js';

const dir = mkdtempSync(join(tmpdir(), 'tp-validate-upstreams-'));
let cert: SelfSignedCert;
let tlsUpstream: FakeUpstream;
let plainUpstream: FakeUpstream;

beforeAll(async () => {
  if (!OPENSSL) return;
  cert = makeSelfSignedCert(dir, 'upstream');
  tlsUpstream = new FakeUpstream();
  tlsUpstream.tls = { cert: cert.cert, key: readFileSync(cert.keyFile, 'utf8') };
  await tlsUpstream.start();
  plainUpstream = new FakeUpstream();
  await plainUpstream.start();
});

afterAll(() => {
  tlsUpstream?.close();
  plainUpstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function upstreamChecks(config: object) {
  const report = await validateConfig(config, { timeoutMs: 1500 });
  return { report, checks: report.connections.filter((c) => c.name === 'quote-upstream') };
}

describe.skipIf(!OPENSSL)('validate-config on the aggregator upstreams', () => {
  it('reaches a TLS upstream (https://) and a plaintext one (http://) in the same configuration', async () => {
    const local = `https://${tlsUpstream.address}`;
    const external = `http://${plainUpstream.address}`;
    const { report, checks } = await upstreamChecks({ localQuoteAddr: local, externalQuoteAddr: external, upstreamTlsCaFile: cert.certFile });
    expect(report.violations.filter((v) => /Quote|upstream/i.test(v.path))).toEqual([]);
    expect(checks).toEqual([expect.objectContaining({ target: local, ok: true }), expect.objectContaining({ target: external, ok: true })]);
  });

  it('fails each upstream reached the wrong way: plaintext to TLS, TLS to plaintext', async () => {
    const { checks } = await upstreamChecks({ localQuoteAddr: `grpc://${tlsUpstream.address}`, externalQuoteAddr: `grpcs://${plainUpstream.address}`, upstreamTlsCaFile: cert.certFile });
    expect(checks.map((c) => c.ok)).toEqual([false, false]);
    expect(checks[0]!.error).toBeDefined();
  });

  it('without a scheme, upstreamTls decides; a scheme wins over it', async () => {
    const { checks } = await upstreamChecks({ localQuoteAddr: tlsUpstream.address, externalQuoteAddr: `http://${plainUpstream.address}`, upstreamTls: true, upstreamTlsCaFile: cert.certFile });
    expect(checks.map((c) => c.ok)).toEqual([true, true]);
    const off = await upstreamChecks({ localQuoteAddr: tlsUpstream.address });
    expect(off.checks.map((c) => c.ok)).toEqual([false]);
  });

  it('refuses a CA file that no upstream uses, and an address that is not one, at their paths', async () => {
    const report = await validateConfig({ localQuoteAddr: `http://${plainUpstream.address}`, upstreamTlsCaFile: cert.certFile }, { offline: true });
    expect(report.violations).toContainEqual({ path: '/upstreamTlsCaFile', message: expect.stringContaining('no upstream uses TLS') as string });
    const bad = await validateConfig({ externalQuoteAddr: 'tls://x:1' }, { offline: true });
    expect(bad.violations.map((v) => v.path)).toContain('/externalQuoteAddr');
  });
});
