import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { waitFor } from '../bus/testing/local-nats.js';
import { loadConfig } from '../config/index.js';
import { createLogger } from '../obs/logger.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type Simulator } from '../sim/simulator.js';
import { ErrorCode } from '../errors.js';
import { ORACLE_MAX_TRACKED_MINTS, OraclePrices } from './oracle-prices.js';

const logger = createLogger({ level: 'silent' });
const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const BONK = 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263';

describe('OraclePrices against the simulator', () => {
  let sim: Simulator;
  let base: string;

  beforeAll(async () => {
    const config = loadConfig(simSchema, {
      env: {},
      flags: { seed: '21', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', tokens: '3', 'pools-per-kind': '1' },
    }).values;
    sim = createSimulator(config, { manual: true, logger });
    base = (await sim.start()).http;
  });
  afterAll(async () => {
    await sim.close();
  });

  it("gives every pair of the simulator's tokens the ratio of their reference prices, in UI and base units, and follows the walk", async () => {
    const oracle = new OraclePrices({ url: `${base}/price/v3`, logger, intervalMs: 50 });
    try {
      const tokens = sim.chain.tokens();
      oracle.track(tokens.map((t) => t.mint));
      const [a, b] = [tokens[0]!, tokens[1]!];
      await waitFor(() => oracle.pairPrice(a.mint, b.mint) !== undefined, 10_000, 'first prices');
      const pair = oracle.pairPrice(a.mint, b.mint)!;
      const price = a.referencePriceUsd / b.referencePriceUsd;
      expect(pair.price).toBeCloseTo(price, 12);
      expect(pair.atomPrice).toBeCloseTo(price * 10 ** (b.decimals - a.decimals), 12);
      expect(pair).toMatchObject({ inputDecimals: a.decimals, outputDecimals: b.decimals });
      expect(pair.updatedAtMs).toBeLessThanOrEqual(Date.now());
      expect(oracle.pairPrice(a.mint, a.mint)?.price).toBe(1);

      sim.chain.advanceSlot(10);
      const moved = sim.chain.token(a.mint)!.referencePriceUsd / sim.chain.token(b.mint)!.referencePriceUsd;
      expect(moved).not.toBe(price);
      await waitFor(() => Math.abs(oracle.pairPrice(a.mint, b.mint)!.price - moved) < 1e-12 * moved, 10_000, 'the moved price');
      expect(oracle.stats()).toMatchObject({ tracked: tokens.length, fresh: tokens.length, errors: 0 });
    } finally {
      await oracle.close();
    }
  });

  it('keeps a mint the simulator does not know unknown, and its pairs undefined', async () => {
    const oracle = new OraclePrices({ url: `${base}/price/v3`, logger, intervalMs: 50 });
    try {
      const known = sim.chain.tokens()[0]!.mint;
      oracle.track([known, BONK]);
      await waitFor(() => oracle.stats().polls > 0 && oracle.stats().fresh === 1, 10_000, 'a poll');
      expect(oracle.pairPrice(known, BONK)).toBeUndefined();
      expect(oracle.pairPrice(BONK, known)).toBeUndefined();
    } finally {
      await oracle.close();
    }
  });
});

/** A price server whose behaviour each test sets. */
interface FakePriceServer {
  url: string;
  requests: string[][];
  respond: (req: IncomingMessage, res: ServerResponse, ids: string[]) => void;
  close(): Promise<void>;
}

async function fakePriceServer(): Promise<FakePriceServer> {
  const fake: FakePriceServer = {
    url: '',
    requests: [],
    respond: (_req, res, ids) => ok(res, ids),
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    const ids = (new URL(req.url ?? '/', 'http://x').searchParams.get('ids') ?? '').split(',');
    fake.requests.push(ids);
    fake.respond(req, res, ids);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/price/v3`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

const USD: Record<string, { usdPrice: number; decimals: number }> = {
  [SOL]: { usdPrice: 150, decimals: 9 },
  [USDC]: { usdPrice: 1, decimals: 6 },
  [BONK]: { usdPrice: 0.00002, decimals: 5 },
};

function ok(res: ServerResponse, ids: string[]): void {
  const body: Record<string, unknown> = {};
  for (const id of ids) {
    const p = USD[id] ?? (id.startsWith('M') ? { usdPrice: 2, decimals: 6 } : undefined);
    if (p !== undefined) body[id] = { ...p, blockId: 1, priceChange24h: null };
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

describe('OraclePrices against a failing feed', () => {
  let fake: FakePriceServer;
  const oracles: OraclePrices[] = [];

  beforeAll(async () => {
    fake = await fakePriceServer();
  });
  afterEach(async () => {
    await Promise.all(oracles.splice(0).map((o) => o.close()));
    fake.respond = (_req, res, ids) => ok(res, ids);
    fake.requests.length = 0;
  });
  afterAll(async () => {
    await fake.close();
  });

  function oracle(options: { maxAgeMs?: number; timeoutMs?: number } = {}): OraclePrices {
    const o = new OraclePrices({ url: fake.url, logger, intervalMs: 20, ...options });
    oracles.push(o);
    return o;
  }

  it('computes price = usdIn / usdOut and atomPrice with the decimals difference', async () => {
    const o = oracle();
    o.track([SOL, USDC]);
    await waitFor(() => o.pairPrice(SOL, USDC) !== undefined, 10_000, 'prices');
    expect(o.pairPrice(SOL, USDC)).toMatchObject({ price: 150, atomPrice: 0.15, inputDecimals: 9, outputDecimals: 6 });
    expect(o.pairPrice(USDC, SOL)!.price).toBeCloseTo(1 / 150, 15);
    expect(o.pairPrice(USDC, SOL)!.atomPrice).toBeCloseTo((1 / 150) * 1000, 12);
  });

  it('asks for at most 50 ids per request and covers every tracked mint', async () => {
    const mints = Array.from({ length: 120 }, (_, i) => `M${i.toString().padStart(3, '0')}`);
    const o = oracle();
    o.track(mints);
    await waitFor(() => o.stats().fresh === 120, 10_000, 'all 120 prices');
    expect(Math.max(...fake.requests.map((r) => r.length))).toBeLessThanOrEqual(50);
    expect(new Set(fake.requests.flat())).toEqual(new Set(mints));
    expect(o.pairPrice(mints[0]!, mints[119]!)?.price).toBe(1);
  });

  it('counts HTTP 500 answers as errors, never throws, and recovers when the feed does', async () => {
    fake.respond = (_req, res) => res.writeHead(500).end('boom');
    const o = oracle();
    o.track([SOL, USDC]);
    await waitFor(() => o.stats().errorsByKind.http >= 2, 10_000, 'http errors');
    expect(o.pairPrice(SOL, USDC)).toBeUndefined();
    fake.respond = (_req, res, ids) => ok(res, ids);
    await waitFor(() => o.pairPrice(SOL, USDC) !== undefined, 10_000, 'recovery');
  });

  it('counts a body that is not JSON, or not an object, as malformed', async () => {
    fake.respond = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"So111');
    const o = oracle();
    o.track([SOL]);
    await waitFor(() => o.stats().errorsByKind.malformed >= 1, 10_000, 'malformed body');
    fake.respond = (_req, res) => res.writeHead(200).end('[1,2]');
    const before = o.stats().errorsByKind.malformed;
    await waitFor(() => o.stats().errorsByKind.malformed > before + 1, 10_000, 'array body');
    expect(o.pairPrice(SOL, SOL)).toBeUndefined();
  });

  it('ignores an entry without a positive usdPrice or integer decimals, counting it malformed', async () => {
    fake.respond = (_req, res) =>
      res.writeHead(200).end(JSON.stringify({ [SOL]: { usdPrice: '150', decimals: 9 }, [USDC]: { usdPrice: 1, decimals: 6.5 }, [BONK]: { usdPrice: 0.00002, decimals: 5 } }));
    const o = oracle();
    o.track([SOL, USDC, BONK]);
    await waitFor(() => o.stats().errorsByKind.malformed >= 2 && o.stats().fresh === 1, 10_000, 'entries checked');
    expect(o.pairPrice(SOL, BONK)).toBeUndefined();
    expect(o.pairPrice(BONK, BONK)?.price).toBe(1);
  });

  it('counts a feed that does not answer within the timeout as a timeout', async () => {
    fake.respond = () => undefined; // never answers
    const o = oracle({ timeoutMs: 100 });
    o.track([SOL]);
    await waitFor(() => o.stats().errorsByKind.timeout >= 1, 10_000, 'timeout');
    expect(o.pairPrice(SOL, SOL)).toBeUndefined();
  });

  it('counts a feed that sends its body a byte at a time past the deadline as a timeout, and polls again', async () => {
    fake.respond = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(' ')), 20);
      res.on('close', () => clearInterval(drip));
    };
    const o = oracle({ timeoutMs: 150 });
    o.track([SOL]);
    await waitFor(() => o.stats().errorsByKind.timeout >= 2, 10_000, 'two timed-out polls');
    expect(o.pairPrice(SOL, SOL)).toBeUndefined();
  });

  it(`polls at most ${ORACLE_MAX_TRACKED_MINTS} mints, dropping the least recently asked about`, async () => {
    const o = oracle();
    const mints = Array.from({ length: ORACLE_MAX_TRACKED_MINTS + 10 }, (_, i) => `M${i}`);
    for (const m of mints) o.track([m]);
    o.track([mints[0]!]); // asked about again: now the most recent, kept
    expect(o.stats().tracked).toBe(ORACLE_MAX_TRACKED_MINTS);
    fake.requests.length = 0;
    await waitFor(() => fake.requests.length > 0, 10_000, 'a poll');
    await waitFor(() => o.stats().fresh === ORACLE_MAX_TRACKED_MINTS, 10_000, 'every tracked price');
    const asked = new Set(fake.requests.flat());
    expect(asked.has(mints[0]!)).toBe(true);
    expect(asked.has(mints[1]!)).toBe(false);
    expect(asked.has(mints.at(-1)!)).toBe(true);
  });

  it('counts a connection refused as a network error', async () => {
    const dead = await fakePriceServer();
    const url = dead.url;
    await dead.close();
    const o = new OraclePrices({ url, logger, intervalMs: 20 });
    oracles.push(o);
    o.track([SOL]);
    await waitFor(() => o.stats().errorsByKind.network >= 1, 10_000, 'network error');
  });

  it('forgets prices older than maxAgeMs once the feed keeps failing', async () => {
    const o = oracle({ maxAgeMs: 300 });
    o.track([SOL, USDC]);
    await waitFor(() => o.pairPrice(SOL, USDC) !== undefined, 10_000, 'prices');
    fake.respond = (_req, res) => res.writeHead(503).end();
    await waitFor(() => o.pairPrice(SOL, USDC) === undefined, 10_000, 'prices aged out');
    expect(o.stats().fresh).toBe(0);
  });

  it('stops polling on close, idempotently', async () => {
    const o = oracle();
    o.track([SOL]);
    await waitFor(() => fake.requests.length > 0, 10_000, 'a request');
    await o.close();
    await o.close();
    const seen = fake.requests.length;
    await new Promise((r) => setTimeout(r, 150));
    expect(fake.requests.length).toBe(seen);
    o.track([USDC]);
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.requests.length).toBe(seen);
  });

  it('refuses a URL that is not http(s)', () => {
    expect(() => new OraclePrices({ url: 'ftp://x/price/v3', logger })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'url', value: 'ftp:' } }));
  });
});
