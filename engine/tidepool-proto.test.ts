import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { MethodDefinition, ServiceDefinition } from '@grpc/proto-loader';
import { describe, expect, it } from 'vitest';

import { TIDEPOOL_PROTO_FILES, loadTidepoolProto, protoDir } from './proto.js';

/** Spec 01's RPCs (and the upstreams' StreamBatchQuotes): kind, request, response. */
const SPEC_METHODS = [
  ['QuoteAggregatorService', 'StreamAggregatedQuotes', false, true, 'BatchQuoteRequest', 'AggregatedQuote'],
  ['QuoteAggregatorService', 'GetAggregatedQuote', false, false, 'QuoteRequest', 'AggregatedQuote'],
  ['QuoteAggregatorService', 'GetConfidenceBreakdown', false, false, 'ConfidenceRequest', 'ConfidenceResponse'],
  ['QuoteAggregatorService', 'Health', false, false, 'HealthRequest', 'AggregatorHealthResponse'],
  ['QuoteService', 'StreamBatchQuotes', false, true, 'BatchQuoteRequest', 'Quote'],
] as const;

const U64_MAX = '18446744073709551615';
const ABOVE_2_53 = '9007199254740993'; // 2^53 + 1: the first integer a double cannot hold
const MINT_IN = 'So11111111111111111111111111111111111111112';
const MINT_OUT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const POOL = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';

const protocAvailable = spawnSync('protoc', ['--version']).status === 0;

/** proto-loader's definition of a method: grpc-js's, plus the request and response descriptors. */
type TidepoolService = 'QuoteAggregatorService' | 'QuoteService';

function methodOf(service: TidepoolService, method: string): MethodDefinition<object, object> {
  const definition = loadTidepoolProto().packageDefinition[`tidepool.v1.${service}`] as ServiceDefinition;
  const def = definition[method];
  if (def === undefined) throw new Error(`${service}.${method} missing`);
  return def;
}

function typeName(def: { type: object }): string {
  return (def.type as { name: string }).name;
}

describe('loadTidepoolProto', () => {
  it('serves every RPC of spec 01 with its streaming kind and messages', () => {
    const proto = loadTidepoolProto();
    expect(loadTidepoolProto()).toBe(proto);
    for (const [service, method, requestStream, responseStream, request, response] of SPEC_METHODS) {
      expect(proto[service].service[method]).toMatchObject({ requestStream, responseStream });
      const def = methodOf(service, method);
      expect(def).toMatchObject({ path: `/tidepool.v1.${service}/${method}`, requestStream, responseStream });
      expect([typeName(def.requestType), typeName(def.responseType)]).toEqual([request, response]);
    }
    expect(Object.keys(proto.QuoteAggregatorService.service).sort()).toEqual(
      ['GetAggregatedQuote', 'GetConfidenceBreakdown', 'Health', 'StreamAggregatedQuotes'],
    );
    expect(Object.keys(proto.QuoteService.service)).toEqual(['StreamBatchQuotes', 'GetQuote', 'GetQuotes']);
  });

  it('round-trips an AggregatedQuote with u64 amounts above 2^53 without losing a unit', () => {
    const get = methodOf('QuoteAggregatorService', 'GetAggregatedQuote');
    const hop = {
      pool: POOL, dex: 'dexa_amm', inputMint: MINT_IN, outputMint: MINT_OUT,
      inAmount: ABOVE_2_53, outAmount: U64_MAX, fee: '22517998136852', slot: '18446744073709551614',
      poolAgeSeconds: 86_400,
    };
    const local = {
      pairId: '0123456789abcdef', inputMint: MINT_IN, outputMint: MINT_OUT, inputAmount: ABOVE_2_53,
      outputAmount: U64_MAX, minOutputAmount: '18354513853341003857', slippageBps: 50, priceImpact: 0.0012,
      route: [hop], slot: '18446744073709551614', contextSlot: U64_MAX, stateAgeMs: 120,
      source: 'QUOTE_SOURCE_LOCAL', origin: 'QUOTE_ORIGIN_CACHE', provider: 'tidepool',
      quotedAtUnixMs: '1795000000000', receivedAtUnixMs: '1795000000001', routeHash: 'ab'.repeat(32),
    };
    const external = { ...local, outputAmount: '18446744073709551000', source: 'QUOTE_SOURCE_EXTERNAL',
      origin: 'QUOTE_ORIGIN_EXTERNAL_API', provider: 'sim', providerUptime: 0.999 };
    const quote = {
      pairId: local.pairId, inputMint: MINT_IN, outputMint: MINT_OUT, inputAmount: ABOVE_2_53,
      localQuote: local, externalQuote: external, bestSource: 'QUOTE_SOURCE_LOCAL',
      outputAmount: U64_MAX, minOutputAmount: local.minOutputAmount, route: [hop], routeHash: local.routeHash,
      confidence: 0.83,
      localConfidence: {
        score: 0.83, decision: 'DECISION_EXECUTE', scoringEnabled: true,
        factors: [{ kind: 'CONFIDENCE_FACTOR_KIND_ROUTE', input: 1, inputUnit: 'hops', inputKnown: true,
          score: 1, weight: 0.2, contribution: 0.2, detail: '1 hop' }],
      },
      decision: 'DECISION_EXECUTE', priceDifferencePct: -3.3e-15, sourceClass: 'SOURCE_CLASS_BOTH',
      slot: '18446744073709551614', aggregatedAtUnixMs: '1795000000002', sequence: ABOVE_2_53,
    };

    const bytes = get.responseSerialize(quote);
    const back = get.responseDeserialize(bytes) as Record<string, unknown>;
    expect(back).toMatchObject(quote);
    expect(back['outputAmount']).toBe(U64_MAX);
    expect((back['localQuote'] as { route: { inAmount: string }[] }).route[0]?.inAmount).toBe(ABOVE_2_53);
    // An absent source stays absent (message fields are not defaulted).
    const localOnly = get.responseDeserialize(get.responseSerialize({ ...quote, externalQuote: null }));
    expect((localOnly as Record<string, unknown>)['externalQuote']).toBeNull();
  });

  it('carries a batch request amount above 2^53 exactly, and each pair\'s swap mode', () => {
    const stream = methodOf('QuoteService', 'StreamBatchQuotes');
    const request = {
      pairs: [
        { inputMint: MINT_IN, outputMint: MINT_OUT, amount: ABOVE_2_53, swapMode: 'SWAP_MODE_EXACT_OUT' },
        { inputMint: MINT_OUT, outputMint: MINT_IN, amount: '1', swapMode: 'SWAP_MODE_EXACT_IN' },
      ],
      slippageBps: 50, updateIntervalMs: 250,
    };
    expect(stream.requestDeserialize(stream.requestSerialize(request))).toEqual(request);
    // A pair written without the field (an older client) reads as UNSPECIFIED: exact in.
    const older = stream.requestDeserialize(stream.requestSerialize({ pairs: [{ inputMint: MINT_IN, outputMint: MINT_OUT, amount: '5' }] })) as { pairs: { swapMode: string }[] };
    expect(older.pairs[0]!.swapMode).toBe('SWAP_MODE_UNSPECIFIED');
  });

  it('documents every message, field, enum value and RPC with a comment', () => {
    const declaration = /^\s*(message|enum|service|rpc|oneof|(optional |repeated )?[\w.]+ \w+ = \d+;)/;
    for (const file of TIDEPOOL_PROTO_FILES) {
      const lines = readFileSync(join(protoDir(), file), 'utf8').split('\n');
      const undocumented = lines.filter((line, i) => {
        if (!declaration.test(line) || /_UNSPECIFIED = 0;/.test(line) || /^\s*oneof /.test(line)) return false;
        return !/^\s*\/\//.test(lines[i - 1] ?? '');
      });
      expect(undocumented, file).toEqual([]);
    }
  });

  it.skipIf(!protocAvailable)('compiles with the official protoc (skipped when protoc is not installed)', () => {
    const out = mkdtempSync(join(tmpdir(), 'tidepool-protoc-'));
    try {
      const set = join(out, 'tidepool.pb');
      const run = spawnSync('protoc', ['-I', protoDir(), `--descriptor_set_out=${set}`, ...TIDEPOOL_PROTO_FILES], {
        encoding: 'utf8',
      });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(statSync(set).size).toBeGreaterThan(0);

      // protoc, an independent decoder, reads grpc-js's bytes with the same u64 values.
      const get = methodOf('QuoteAggregatorService', 'GetAggregatedQuote');
      const bytes = get.responseSerialize({ pairId: 'p', outputAmount: U64_MAX, inputAmount: ABOVE_2_53 });
      const decode = ['-I', protoDir(), '--decode=tidepool.v1.AggregatedQuote', 'tidepool/v1/aggregator.proto'];
      const text = spawnSync('protoc', decode, { input: bytes, encoding: 'utf8' });
      expect(text.status).toBe(0);
      expect(text.stdout).toContain(`input_amount: ${ABOVE_2_53}`);
      expect(text.stdout).toContain(`output_amount: ${U64_MAX}`);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
