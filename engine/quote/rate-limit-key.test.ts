import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { JwtVerifier } from '../auth/index.js';
import { PoolCache } from '../cache/index.js';
import { ErrorCode } from '../errors.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import type { QuoteHttpServer } from '../quote-http/quote-http-server.js';
import { RateLimiter } from '../common/index.js';
import { FakeClock, manualSimulator, quoteHttpServer, storePool } from './testing.js';

/**
 * Issue 11 item 3: the rate limit is keyed by what the client cannot forge (its address, or the
 * verified JWT subject), and the limiter's memory is bounded in bytes and shrinks when idle.
 */
const sim = manualSimulator();
const cache = new PoolCache({ stalenessThresholdMs: 3_600_000 });
const limiterClock = new FakeClock();
const limiter = new RateLimiter({ rps: 5, now: limiterClock.now });
let server: QuoteHttpServer;
let url: string;

beforeAll(async () => {
  let slot = 100n;
  for (const view of sim.chain.pools()) storePool(cache, view, slot++);
  server = quoteHttpServer({ cache, rateLimiter: limiter });
  url = `http://127.0.0.1:${await server.start(0)}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000`;
});

afterAll(async () => {
  await server.close();
  await sim.close();
});

describe('rate-limit key over real HTTP', () => {
  it('limits one address whatever x-api-key it rotates, and huge keys cost the limiter nothing', async () => {
    const statuses: number[] = [];
    const bigKey = 'k'.repeat(10_000);
    for (let i = 0; i < 40; i++) {
      const res = await fetch(url, { headers: { 'x-api-key': `${bigKey}${i}` } });
      statuses.push(res.status);
      const body = (await res.json()) as { error?: { code: string } };
      if (res.status === 429) expect(body.error?.code).toBe(ErrorCode.RateLimited);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(10); // the burst, 2 × 5
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
    expect(limiter.clients).toBe(1);
    expect(limiter.bytes).toBeLessThan(512);
    // Header fields past 16 KiB are refused (431) before anything reads them.
    const huge = await fetch(url, { headers: { 'x-api-key': 'k'.repeat(60_000) } });
    expect(huge.status).toBe(431);
    expect(((await huge.json()) as { error: { code: string } }).error.code).toBe(ErrorCode.HeadersTooLarge);
    expect(limiter.clients).toBe(1);
  });
});

describe('rate-limit key with auth on', () => {
  const SECRET = 'a-rate-limit-test-secret-of-32-bytes!';
  const token = (sub: string, secret = SECRET): Promise<string> =>
    new SignJWT({ sub }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('10m').sign(new TextEncoder().encode(secret));

  it('keys a verified token by its subject, and anything unverified by the address', async () => {
    const clock = new FakeClock();
    const subjectLimiter = new RateLimiter({ rps: 5, now: clock.now });
    const verifier = new JwtVerifier({ secret: SECRET });
    const authServer = quoteHttpServer({ cache, rateLimiter: subjectLimiter, auth: verifier });
    try {
      const authUrl = `http://127.0.0.1:${await authServer.start(0)}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000`;
      const [alice, bob] = [await token('alice'), await token('bob')];
      const get = async (t: string): Promise<number> => (await fetch(authUrl, { headers: { authorization: `Bearer ${t}` } })).status;
      // Each token's first request is limited by the address (its signature is not checked yet), then verified.
      expect(await get(alice)).toBe(200);
      expect(await get(bob)).toBe(200);
      expect(subjectLimiter.clients).toBe(1);
      // From the same address, alice spends her own burst (2 × 5) and bob still has his.
      const aliceStatuses: number[] = [];
      for (let i = 0; i < 12; i++) aliceStatuses.push(await get(alice));
      expect(aliceStatuses.filter((s) => s === 200)).toHaveLength(10);
      expect(aliceStatuses.slice(10)).toEqual([429, 429]);
      expect(await get(bob)).toBe(200);
      expect(subjectLimiter.clients).toBe(3); // the address, alice, bob
      // A token claiming alice's subject under another key is never her bucket: the address's, then 401.
      const forged = await token('alice', 'another-secret-that-is-32-bytes-long!');
      expect(await get(forged)).toBe(401);
      expect(subjectLimiter.clients).toBe(3);
    } finally {
      await authServer.close();
    }
  });
});

describe('RateLimiter memory', () => {
  it('bounds its memory in bytes, storing a long key (a JWT subject) as its hash', () => {
    const clock = new FakeClock();
    const bounded = new RateLimiter({ rps: 1, maxBytes: 64 * 1024, maxClients: 1_000_000, now: clock.now });
    for (let i = 0; i < 20_000; i++) bounded.take(`sub:${'x'.repeat(5_000)}${i}`);
    expect(bounded.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(bounded.clients).toBeLessThan(64 * 1024 / 96);
    // A long key is still one client: its bucket empties.
    const key = `sub:${'y'.repeat(10_000)}`;
    expect(bounded.take(key)).toBe(0);
    expect(bounded.take(key)).toBe(0);
    expect(bounded.take(key)).toBe(1);
  });

  it('drops the buckets of idle clients (refilled to the burst), and only those', () => {
    const clock = new FakeClock();
    const idle = new RateLimiter({ rps: 10, now: clock.now });
    for (let i = 0; i < 5_000; i++) idle.take(`addr:10.0.${i >> 8}.${i & 255}`);
    for (let i = 0; i < 20; i++) idle.take('addr:busy');
    expect(idle.clients).toBe(5_001);
    clock.advance(1_000); // the one-token clients are full again (burst 20, 10/s); 'busy' is not
    expect(idle.sweep()).toBe(5_000);
    expect(idle.clients).toBe(1);
    expect(idle.bytes).toBeLessThan(200);
    expect(idle.take('addr:busy')).toBe(0);
    clock.advance(2_000);
    idle.sweep();
    expect(idle.clients).toBe(0);
    expect(idle.bytes).toBe(0);
  });
});
