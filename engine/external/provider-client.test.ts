import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../errors.js';
import { providerNameOf } from './external-config.js';
import { ProviderClient, retryAfterMs } from './provider-client.js';
import { USDC, WSOL } from './testing/fake-provider.js';

describe('retryAfterMs', () => {
  const now = Date.parse('2026-11-22T16:00:00Z');
  it('reads delta-seconds and HTTP-dates', () => {
    expect(retryAfterMs('2', now)).toBe(2000);
    expect(retryAfterMs('0.5', now)).toBe(500);
    expect(retryAfterMs('Sun, 22 Nov 2026 16:00:03 GMT', now)).toBe(3000);
  });
  it('falls back to the default when absent or unreadable, and clamps', () => {
    expect(retryAfterMs(undefined, now)).toBe(1000);
    expect(retryAfterMs('soon', now)).toBe(1000);
    expect(retryAfterMs('Sun, 22 Nov 2026 15:59:00 GMT', now)).toBe(0);
    expect(retryAfterMs('86400', now)).toBe(300_000);
  });
});

describe('ProviderClient.pathFor', () => {
  it('keeps the URL\'s own query, adds the pair, and never puts the API key in the URL', async () => {
    const client = new ProviderClient({ quoteUrl: 'https://lite-api.jup.ag/swap/v1/quote?onlyDirectRoutes=true&amount=1', apiKey: 'secret', timeoutMs: 100 });
    const path = client.pathFor({ inputMint: WSOL, outputMint: USDC, amount: 18_446_744_073_709_551_615n, slippageBps: 25 });
    const url = new URL(path, 'https://x');
    expect(url.pathname).toBe('/swap/v1/quote');
    expect(Object.fromEntries(url.searchParams)).toEqual({ onlyDirectRoutes: 'true', amount: '18446744073709551615', inputMint: WSOL, outputMint: USDC, slippageBps: '25' });
    expect(path).not.toContain('secret');
    await client.close();
    await client.close();
  });
});

describe('ProviderClient options', () => {
  it('refuses a quote URL that is not http(s), naming it without its query', () => {
    expect(() => new ProviderClient({ quoteUrl: 'ftp://provider.example/quote?apiKey=secret', timeoutMs: 100 })).toThrow(
      expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'quoteUrl', value: 'ftp:' }, message: 'quoteUrl is not an http(s) URL: ftp://provider.example' }),
    );
  });
});

describe('providerNameOf', () => {
  it('is the configured name, else the URL host, else "simulator" on loopback', () => {
    expect(providerNameOf({ providerName: 'jupiter', quoteUrl: 'http://127.0.0.1:8890/quote' })).toBe('jupiter');
    expect(providerNameOf({ providerName: '', quoteUrl: 'https://lite-api.jup.ag/swap/v1/quote' })).toBe('lite-api.jup.ag');
    for (const host of ['127.0.0.1:8890', 'localhost', '[::1]:8890']) expect(providerNameOf({ providerName: '', quoteUrl: `http://${host}/quote` })).toBe('simulator');
  });
});
