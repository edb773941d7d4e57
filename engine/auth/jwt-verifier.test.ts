import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { SignJWT } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';

import { ErrorCode, TpError } from '../errors.js';
import { AuthError } from './auth-error.js';
import { CACHE_TTL_MS, JwtVerifier, readPublicKeyFile } from './jwt-verifier.js';

const SECRET = 'a-test-secret-that-is-32-bytes-long!!';
const key = (s: string): Uint8Array => new TextEncoder().encode(s);
const nowS = (): number => Math.floor(Date.now() / 1000);

function hs256(claims: Record<string, unknown> = {}, secret = SECRET, expS = nowS() + 600): Promise<string> {
  return new SignJWT({ sub: 'tester', ...claims }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(expS).sign(key(secret));
}

const dir = mkdtempSync(join(tmpdir(), 'tidepool-jwt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function reason(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AuthError);
  return (err as AuthError).message;
}

describe('JwtVerifier', () => {
  it('accepts a valid HS256 token and refuses a bad signature, an expired token, a future nbf', async () => {
    const v = new JwtVerifier({ secret: SECRET });
    await v.verify(await hs256());
    expect(await reason(v.verify(await hs256({}, 'another-secret-of-at-least-32-bytes!!')))).toMatch(/signature/);
    expect(await reason(v.verify(await hs256({}, SECRET, nowS() - 60)))).toMatch(/expired/);
    const early = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setNotBefore(nowS() + 600).setExpirationTime(nowS() + 900).sign(key(SECRET));
    expect(await reason(v.verify(early))).toMatch(/nbf/);
    expect(await reason(v.verify('not.a.jwt'))).toMatch(/malformed|invalid/);
  });

  it('tolerates a few seconds of clock skew on exp', async () => {
    const v = new JwtVerifier({ secret: SECRET });
    await v.verify(await hs256({}, SECRET, nowS() - 2));
  });

  it('checks aud and iss when configured', async () => {
    const v = new JwtVerifier({ secret: SECRET, audience: 'tidepool', issuer: 'https://issuer.example' });
    await v.verify(await hs256({ aud: 'tidepool', iss: 'https://issuer.example' }));
    expect(await reason(v.verify(await hs256({ aud: 'other', iss: 'https://issuer.example' })))).toMatch(/aud/);
    expect(await reason(v.verify(await hs256({ aud: 'tidepool' })))).toMatch(/iss/);
  });

  it('verifies EdDSA with the public key and never lets the key types cross', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const file = join(dir, 'ed25519.pem');
    writeFileSync(file, publicKey.export({ type: 'spki', format: 'pem' }));
    const v = new JwtVerifier({ publicKey: readPublicKeyFile(file) });
    await v.verify(await new SignJWT({}).setProtectedHeader({ alg: 'EdDSA' }).setExpirationTime('5m').sign(privateKey));
    expect(await reason(v.verify(await hs256()))).toMatch(/algorithm/);
    const other = generateKeyPairSync('ed25519').privateKey;
    expect(await reason(v.verify(await new SignJWT({}).setProtectedHeader({ alg: 'EdDSA' }).setExpirationTime('5m').sign(other)))).toMatch(/signature/);
    const hsOnly = new JwtVerifier({ secret: SECRET });
    expect(await reason(hsOnly.verify(await new SignJWT({}).setProtectedHeader({ alg: 'EdDSA' }).setExpirationTime('5m').sign(privateKey)))).toMatch(/algorithm/);
  });

  it('refuses a key file that is missing, not PEM, or not Ed25519, naming the setting', () => {
    const code = (f: () => unknown): string => {
      try {
        f();
      } catch (err) {
        expect(err).toBeInstanceOf(TpError);
        expect((err as TpError).message).toMatch(/auth\.jwtPublicKeyFile/);
        return (err as TpError).code;
      }
      throw new Error('did not throw');
    };
    expect(code(() => readPublicKeyFile(join(dir, 'missing.pem')))).toBe(ErrorCode.ConfigInvalid);
    writeFileSync(join(dir, 'junk.pem'), 'junk');
    expect(code(() => readPublicKeyFile(join(dir, 'junk.pem')))).toBe(ErrorCode.ConfigInvalid);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    writeFileSync(join(dir, 'rsa.pem'), rsa.export({ type: 'spki', format: 'pem' }));
    expect(code(() => readPublicKeyFile(join(dir, 'rsa.pem')))).toBe(ErrorCode.ConfigInvalid);
  });

  it('remembers a verified token until its exp, at most CACHE_TTL_MS', async () => {
    let now = Date.now();
    const v = new JwtVerifier({ secret: SECRET, now: () => now });
    const long = await hs256({}, SECRET, Math.floor(now / 1000) + 3600);
    expect(v.isVerified(long)).toBe(false);
    await v.verify(long);
    expect(v.isVerified(long)).toBe(true);
    now += CACHE_TTL_MS + 1;
    expect(v.isVerified(long)).toBe(false);
    const short = await hs256({}, SECRET, Math.floor(now / 1000) + 10);
    await v.verify(short);
    expect(v.isVerified(short)).toBe(true);
    now += 20_000;
    expect(v.isVerified(short)).toBe(false);
    await expect(v.verify(short)).rejects.toThrow(/expired/);
  });
});
