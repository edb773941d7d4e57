import { describe, expect, it } from 'vitest';

import { MASK, REDACTED, isSecretName, maskSecrets, maskSecretsInText, maskUrl } from './secret-mask.js';

describe('maskUrl', () => {
  it('masks the password of the user info, and a user name that looks like a key', () => {
    expect(maskUrl('http://user:pass@host:8899')).toBe(`http://user:${MASK}@host:8899`);
    expect(maskUrl('https://a1b2c3d4e5f6a7b8c9d0e1f2@rpc.example.com/')).toBe(`https://${MASK}@rpc.example.com/`);
    expect(maskUrl('redis://:hunter2@127.0.0.1:6379/0')).toBe(`redis://:${MASK}@127.0.0.1:6379/0`);
    expect(maskUrl('postgres://postgres@127.0.0.1:5432/test')).toBe('postgres://postgres@127.0.0.1:5432/test');
  });

  it('masks secret query values and keeps the others', () => {
    expect(maskUrl('https://mainnet.helius-rpc.com/?api-key=abc-123&cluster=main')).toBe(`https://mainnet.helius-rpc.com/?api-key=${MASK}&cluster=main`);
    for (const name of ['apikey', 'api_key', 'token', 'access_token', 'key', 'secret', 'password', 'auth', 'x-api-key', 'signature']) {
      expect(maskUrl(`http://h/?${name}=s3cr3t`), name).toBe(`http://h/?${name}=${MASK}`);
    }
  });

  it('masks a key-like path segment (hosted RPC providers) and leaves ordinary paths', () => {
    expect(maskUrl('https://solana-mainnet.g.alchemy.com/v2/AbCdEf0123456789abcdefGHIJ')).toBe(`https://solana-mainnet.g.alchemy.com/v2/${MASK}`);
    expect(maskUrl('http://127.0.0.1:8890/price/v3')).toBe('http://127.0.0.1:8890/price/v3');
    expect(maskUrl('nats://127.0.0.1:4222')).toBe('nats://127.0.0.1:4222');
  });
});

describe('maskSecretsInText', () => {
  it('masks URLs, bearer tokens and name=value secrets inside text', () => {
    const text = 'RPC_ENDPOINTS = "http://u:p4ss@h:1,https://x/?token=zz": bad; Authorization: Bearer eyJabc.def password=hunter2 api-key: k1';
    const masked = maskSecretsInText(text);
    for (const secret of ['p4ss', 'zz', 'eyJabc', 'hunter2', 'k1']) expect(masked).not.toContain(secret);
    expect(masked).toContain(`Bearer ${MASK}`);
    expect(masked).toContain(`http://u:${MASK}@h:1`);
  });

  it('leaves text without secrets alone', () => {
    const text = 'unknown token So11111111111111111111111111111111111111112: no pool for the pair; signature: 5abc';
    expect(maskSecretsInText(text)).toBe(text);
  });
});

describe('maskSecrets', () => {
  it('redacts fields named like secrets and masks strings everywhere else', () => {
    const out = maskSecrets({ 'rpc.endpoints': ['http://u:p@h:1'], 'auth.jwtSecret': 's', apiKey: '', nested: { password: 'p', token: 't' }, port: 8080, slot: 5n, ok: true });
    expect(out).toEqual({ 'rpc.endpoints': [`http://u:${MASK}@h:1`], 'auth.jwtSecret': REDACTED, apiKey: '', nested: { password: REDACTED, token: REDACTED }, port: 8080, slot: 5n, ok: true });
  });

  it('stops at cycles and at depth, never recursing without bound', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    expect(maskSecrets(a)).toEqual({ name: 'a', self: '[cycle]' });
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => maskSecrets(deep)).not.toThrow();
  });

  it('passes bytes and dates through, and masks what toJSON shows', () => {
    const bytes = Buffer.from([1, 2, 3]);
    const at = new Date(0);
    const out = maskSecrets({ bytes, at, shown: { toJSON: () => ({ url: 'http://u:pw@h' }) } });
    expect(out.bytes).toBe(bytes);
    expect(out.at).toBe(at);
    expect(out.shown).toEqual({ url: `http://u:${MASK}@h` });
  });

  it('knows field names from parameter names', () => {
    expect(isSecretName('signature')).toBe(false);
    expect(isSecretName('signature', true)).toBe(true);
    expect(isSecretName('key')).toBe(false);
    expect(isSecretName('bus.token')).toBe(true);
    expect(isSecretName('upstreamToken')).toBe(true);
  });
});
