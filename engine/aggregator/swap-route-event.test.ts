import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isTpError } from '../errors.js';
import {
  SWAP_ROUTE_EVENT_SCHEMA_VERSION,
  decodeSwapRouteEvent,
  encodeSwapRouteEvent,
  pairId,
  routeHash,
  type SwapRouteEventFields,
} from './swap-route-event.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const SCHEMA = join(REPO, 'schemas', 'swap-route-event.fbs');
const GENERATED = join(REPO, 'engine', 'aggregator', 'generated', 'swap-route-event_generated.ts');
const NO_FLATC = 'flatc not on PATH (scripts/services.sh installs flatbuffers-compiler)';

function flatcVersion(): string | undefined {
  try {
    return execFileSync('flatc', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}
const FLATC = flatcVersion();

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const BONK = 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263';
const BIG = (1n << 53n) + 1n; // not representable as a double

function fields(overrides: Partial<SwapRouteEventFields> = {}): SwapRouteEventFields {
  return {
    inputMint: SOL,
    outputMint: USDC,
    inputAmount: (1n << 64n) - 1n,
    localOutputAmount: BIG,
    externalOutputAmount: BIG + 1_000_003n,
    bestSource: 'external',
    confidence: 0.75,
    localConfidence: 0.625,
    externalConfidence: 0.75,
    decision: 'Verify',
    slot: (1n << 60n) + 7n,
    quotedAtMs: 1_763_800_000_123,
    createdAtMs: 1_763_800_000_456,
    hops: [
      {
        pool: '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2',
        dex: 'raydium-amm-v4',
        inputMint: SOL,
        outputMint: BONK,
        inAmount: (1n << 64n) - 1n,
        outAmount: (1n << 63n) + 5n,
        fee: (1n << 54n) + 3n,
      },
      {
        pool: 'HJPjoWUrhoZzkNfRpHuieeFk9WcZWjwy6PBjZ81ngndJ',
        dex: 'orca-whirlpool',
        inputMint: BONK,
        outputMint: USDC,
        inAmount: (1n << 63n) + 5n,
        outAmount: BIG + 1_000_003n,
        fee: 9_007_199_254_740_993n,
      },
    ],
    ...overrides,
  };
}

describe('SwapRouteEvent', () => {
  it('round-trips every field, u64 values above 2^53 exact', () => {
    const input = fields();
    const event = decodeSwapRouteEvent(encodeSwapRouteEvent(input));
    expect(event).toEqual({
      ...input,
      schemaVersion: SWAP_ROUTE_EVENT_SCHEMA_VERSION,
      pairId: pairId(SOL, USDC, input.inputAmount),
      routeHash: routeHash(input.hops),
      estimatedProfit: 1_000_003n,
      priceDifferencePct: (1_000_003 / Number(BIG)) * 100,
    });
    expect(event.inputAmount).toBe(18_446_744_073_709_551_615n);
    expect(event.hops[1]!.fee).toBe(9_007_199_254_740_993n);
  });

  it('gives a negative estimated profit when the local output is larger', () => {
    const event = decodeSwapRouteEvent(
      encodeSwapRouteEvent(fields({ localOutputAmount: BIG + 10n, externalOutputAmount: BIG, bestSource: 'local' })),
    );
    expect(event.estimatedProfit).toBe(-10n);
    expect(event.bestSource).toBe('local');
  });

  it('computes pairID as the first 16 hex chars of SHA-256 of inputMint:outputMint:amount', () => {
    const amount = (1n << 64n) - 1n;
    const expected = createHash('sha256').update(`${SOL}:${USDC}:18446744073709551615`).digest('hex').slice(0, 16);
    expect(pairId(SOL, USDC, amount)).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{16}$/);
    expect(pairId(USDC, SOL, amount)).not.toBe(expected);
  });

  it('computes the route hash as SHA-256 over the ordered hops (pool, input, output)', () => {
    const hops = fields().hops;
    const text = hops.map((h) => `${h.pool}:${h.inputMint}:${h.outputMint}`).join('|');
    expect(routeHash(hops)).toBe(createHash('sha256').update(text).digest('hex'));
    // order matters; amounts, dex and fees do not
    expect(routeHash([...hops].reverse())).not.toBe(routeHash(hops));
    expect(routeHash(hops.map((h) => ({ ...h, inAmount: 1n, dex: 'x', fee: 0n })))).toBe(routeHash(hops));
  });

  it('refuses amounts outside u64 and buffers without the TPSR identifier', () => {
    expect(() => encodeSwapRouteEvent(fields({ inputAmount: 1n << 64n }))).toThrow(
      expect.objectContaining({ code: 'TP_ERR_INVALID_AMOUNT' }),
    );
    expect(() => encodeSwapRouteEvent(fields({ slot: -1n }))).toThrow(
      expect.objectContaining({ code: 'TP_ERR_INVALID_AMOUNT' }),
    );
    // external − local below −2^63 does not fit the schema's `long`
    try {
      encodeSwapRouteEvent(fields({ localOutputAmount: (1n << 64n) - 1n, externalOutputAmount: 0n }));
      expect.unreachable();
    } catch (err) {
      expect(isTpError(err, 'TP_ERR_INVALID_AMOUNT')).toBe(true);
    }
    expect(() => decodeSwapRouteEvent(new Uint8Array(16))).toThrow(
      expect.objectContaining({ code: 'TP_ERR_ENTRY_MALFORMED' }),
    );
  });

  it.skipIf(FLATC === undefined)(`is read by flatc's JSON output from the schema (skipped when ${NO_FLATC})`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'swap-route-event-'));
    try {
      const input = fields();
      const bin = join(dir, 'event.bin');
      await writeFile(bin, encodeSwapRouteEvent(input));
      await run('flatc', ['--json', '--strict-json', '--defaults-json', '--raw-binary', '-o', dir, SCHEMA, '--', bin]);
      const text = await readFile(join(dir, 'event.json'), 'utf8');
      // flatc prints 64-bit integers as bare JSON numbers: quote them before JSON.parse so they stay exact.
      const json = JSON.parse(text.replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,}\]])/g, '$1"$2"')) as Record<string, unknown>;
      expect(json).toEqual({
        schema_version: 1,
        pair_id: pairId(SOL, USDC, input.inputAmount),
        route_hash: routeHash(input.hops),
        input_mint: SOL,
        output_mint: USDC,
        input_amount: '18446744073709551615',
        local_output_amount: '9007199254740993',
        external_output_amount: '9007199255740996',
        estimated_profit: 1_000_003,
        price_difference_pct: expect.closeTo((1_000_003 / Number(BIG)) * 100, 12),
        best_source: 'External',
        confidence: 0.75,
        local_confidence: 0.625,
        external_confidence: 0.75,
        decision: 'Verify',
        slot: ((1n << 60n) + 7n).toString(),
        quoted_at_ms: 1_763_800_000_123,
        created_at_ms: 1_763_800_000_456,
        hops: [
          {
            pool: input.hops[0]!.pool,
            dex: 'raydium-amm-v4',
            input_mint: SOL,
            output_mint: BONK,
            in_amount: '18446744073709551615',
            out_amount: '9223372036854775813',
            fee: '18014398509481987',
          },
          {
            pool: input.hops[1]!.pool,
            dex: 'orca-whirlpool',
            input_mint: BONK,
            output_mint: USDC,
            in_amount: '9223372036854775813',
            out_amount: '9007199255740996',
            fee: '9007199254740993',
          },
        ],
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(FLATC !== 'flatc version 2.0.8')(
    'has generated code identical to what flatc 2.0.8 makes from the schema (skipped without flatc 2.0.8)',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'swap-route-event-gen-'));
      try {
        await run('flatc', ['--ts', '--ts-flat-files', '-o', dir, SCHEMA]);
        const fresh = await readFile(join(dir, 'swap-route-event_generated.ts'), 'utf8');
        expect(fresh).toBe(await readFile(GENERATED, 'utf8'));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
