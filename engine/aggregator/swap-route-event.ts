/**
 * `SwapRouteEvent` (spec 01, Events): the FlatBuffers event the aggregator publishes on
 * `market.swap_route.optimal` for an aggregated quote. The schema is schemas/swap-route-event.fbs
 * (namespace `tidepool.v1`); the table code under ./generated/ is generated from it by
 * `npm run gen:fbs`. This module turns a plain object into an event buffer and back.
 *
 * docs/architecture.md §3: pairID = first 16 hex chars of SHA-256 of `inputMint:outputMint:amount`;
 * route hash = SHA-256 over the ordered hops (pool, input, output); estimated profit =
 * external output − local output, in output units. u64 values stay bigint end to end.
 */
import { createHash } from 'node:crypto';
import * as flatbuffers from 'flatbuffers';
import { ErrorCode, TpError } from '../errors.js';
import { pairId } from '../quote/index.js';
import {
  Decision as FbDecision,
  QuoteSource as FbQuoteSource,
  RouteHop as FbRouteHop,
  SwapRouteEvent as FbSwapRouteEvent,
} from './generated/swap-route-event_generated.js';

/** Spec 01: the subject the event is published on. */
export const SWAP_ROUTE_SUBJECT = 'market.swap_route.optimal';
/** The `schema_version` this module writes (schemas/swap-route-event.fbs). */
export const SWAP_ROUTE_EVENT_SCHEMA_VERSION = 1;
/** The schema's `file_identifier`, at bytes 4..8 of every event. */
export const SWAP_ROUTE_EVENT_FILE_IDENTIFIER = 'TPSR';

export const Decision = { Execute: 'Execute', Verify: 'Verify', Cautious: 'Cautious', Skip: 'Skip' } as const;
export type Decision = (typeof Decision)[keyof typeof Decision];

export const QuoteSource = { Local: 'local', External: 'external' } as const;
export type QuoteSource = (typeof QuoteSource)[keyof typeof QuoteSource];

const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

/** One hop of a route, in route order. Amounts in base units of the hop's mints. */
export interface SwapRouteHop {
  pool: string;
  dex: string;
  inputMint: string;
  outputMint: string;
  inAmount: bigint;
  outAmount: bigint;
  /** In input-mint base units. */
  fee: bigint;
}

/** What the aggregator knows about one aggregated quote with both sources present. */
export interface SwapRouteEventFields {
  inputMint: string;
  outputMint: string;
  inputAmount: bigint;
  localOutputAmount: bigint;
  externalOutputAmount: bigint;
  bestSource: QuoteSource;
  /** Confidence of the best quote, in [0, 1]. */
  confidence: number;
  localConfidence: number;
  externalConfidence: number;
  decision: Decision;
  /** Slot of the pool state the local quote used. */
  slot: bigint;
  /** Unix ms. */
  quotedAtMs: number;
  /** Unix ms; `Date.now()` when absent. */
  createdAtMs?: number;
  /** The route of the best quote, in order. */
  hops: readonly SwapRouteHop[];
}

/** A decoded event: the fields plus what the encoder derived from them. */
export interface SwapRouteEvent extends Omit<SwapRouteEventFields, 'createdAtMs' | 'hops'> {
  schemaVersion: number;
  pairId: string;
  routeHash: string;
  /** external − local output, in output-mint base units (may be negative). */
  estimatedProfit: bigint;
  /** (external − local) / local × 100; 0 when the local output is 0. */
  priceDifferencePct: number;
  createdAtMs: number;
  hops: SwapRouteHop[];
}

/** docs/architecture.md §3's pairID, defined beside the quote messages it names (engine/quote/quote-wire.ts). */
export { pairId };

/**
 * docs/architecture.md §3: SHA-256 over the ordered hops (pool, input, output), as 64 lowercase hex chars.
 * The hashed text is `pool:inputMint:outputMint` per hop, hops joined by `|` (base58 never
 * contains `:` or `|`, so distinct routes give distinct texts).
 */
export function routeHash(hops: readonly Pick<SwapRouteHop, 'pool' | 'inputMint' | 'outputMint'>[]): string {
  const hash = createHash('sha256');
  for (let i = 0; i < hops.length; i++) {
    const hop = hops[i]!;
    hash.update(`${i === 0 ? '' : '|'}${hop.pool}:${hop.inputMint}:${hop.outputMint}`);
  }
  return hash.digest('hex');
}

/** docs/architecture.md §3: external output − local output, in output units. */
export function estimatedProfit(localOutputAmount: bigint, externalOutputAmount: bigint): bigint {
  return externalOutputAmount - localOutputAmount;
}

/** docs/architecture.md §3: (external − local) / local × 100; 0 when local is 0 (no finite answer). */
export function priceDifferencePct(localOutputAmount: bigint, externalOutputAmount: bigint): number {
  if (localOutputAmount === 0n) return 0;
  return (Number(externalOutputAmount - localOutputAmount) / Number(localOutputAmount)) * 100;
}

const DECISION_TO_FB: Record<Decision, FbDecision> = {
  Execute: FbDecision.Execute,
  Verify: FbDecision.Verify,
  Cautious: FbDecision.Cautious,
  Skip: FbDecision.Skip,
};
const DECISION_FROM_FB: readonly Decision[] = ['Execute', 'Verify', 'Cautious', 'Skip'];

// One builder reused by every encode; the result is copied out before the next call clears it.
const builder = new flatbuffers.Builder(1024);

/**
 * Builds the FlatBuffers bytes of the event for `fields`: pairID, route hash, estimated profit and
 * price difference are derived here. Throws `TP_ERR_INVALID_AMOUNT` when a u64 field is outside
 * [0, 2^64) or the profit outside the signed 64-bit range. The result is a fresh copy.
 */
export function encodeSwapRouteEvent(fields: SwapRouteEventFields): Uint8Array {
  checkU64('inputAmount', fields.inputAmount);
  checkU64('localOutputAmount', fields.localOutputAmount);
  checkU64('externalOutputAmount', fields.externalOutputAmount);
  checkU64('slot', fields.slot);
  const profit = estimatedProfit(fields.localOutputAmount, fields.externalOutputAmount);
  if (profit < I64_MIN || profit > I64_MAX) {
    throw new TpError(ErrorCode.InvalidAmount, 'estimated profit does not fit a signed 64-bit integer', {
      context: { field: 'estimatedProfit', value: profit.toString() },
    });
  }
  const quotedAtMs = msToU64('quotedAtMs', fields.quotedAtMs);
  const createdAtMs = msToU64('createdAtMs', fields.createdAtMs ?? Date.now());

  builder.clear();
  // Children first: strings and hop tables must be finished before the root table starts.
  const hopOffsets = new Array<flatbuffers.Offset>(fields.hops.length);
  for (let i = 0; i < fields.hops.length; i++) {
    const hop = fields.hops[i]!;
    checkU64(`hops[${i}].inAmount`, hop.inAmount);
    checkU64(`hops[${i}].outAmount`, hop.outAmount);
    checkU64(`hops[${i}].fee`, hop.fee);
    hopOffsets[i] = FbRouteHop.createRouteHop(
      builder,
      builder.createString(hop.pool),
      builder.createString(hop.dex),
      builder.createString(hop.inputMint),
      builder.createString(hop.outputMint),
      hop.inAmount,
      hop.outAmount,
      hop.fee,
    );
  }
  const hopsVector = FbSwapRouteEvent.createHopsVector(builder, hopOffsets);
  const pairIdOffset = builder.createString(pairId(fields.inputMint, fields.outputMint, fields.inputAmount));
  const routeHashOffset = builder.createString(routeHash(fields.hops));
  const inputMintOffset = builder.createString(fields.inputMint);
  const outputMintOffset = builder.createString(fields.outputMint);

  FbSwapRouteEvent.startSwapRouteEvent(builder);
  FbSwapRouteEvent.addSchemaVersion(builder, SWAP_ROUTE_EVENT_SCHEMA_VERSION);
  FbSwapRouteEvent.addPairId(builder, pairIdOffset);
  FbSwapRouteEvent.addRouteHash(builder, routeHashOffset);
  FbSwapRouteEvent.addInputMint(builder, inputMintOffset);
  FbSwapRouteEvent.addOutputMint(builder, outputMintOffset);
  FbSwapRouteEvent.addInputAmount(builder, fields.inputAmount);
  FbSwapRouteEvent.addLocalOutputAmount(builder, fields.localOutputAmount);
  FbSwapRouteEvent.addExternalOutputAmount(builder, fields.externalOutputAmount);
  FbSwapRouteEvent.addEstimatedProfit(builder, profit);
  FbSwapRouteEvent.addPriceDifferencePct(
    builder,
    priceDifferencePct(fields.localOutputAmount, fields.externalOutputAmount),
  );
  FbSwapRouteEvent.addBestSource(
    builder,
    fields.bestSource === QuoteSource.External ? FbQuoteSource.External : FbQuoteSource.Local,
  );
  FbSwapRouteEvent.addConfidence(builder, fields.confidence);
  FbSwapRouteEvent.addLocalConfidence(builder, fields.localConfidence);
  FbSwapRouteEvent.addExternalConfidence(builder, fields.externalConfidence);
  FbSwapRouteEvent.addDecision(builder, DECISION_TO_FB[fields.decision]);
  FbSwapRouteEvent.addSlot(builder, fields.slot);
  FbSwapRouteEvent.addQuotedAtMs(builder, quotedAtMs);
  FbSwapRouteEvent.addCreatedAtMs(builder, createdAtMs);
  FbSwapRouteEvent.addHops(builder, hopsVector);
  const root = FbSwapRouteEvent.endSwapRouteEvent(builder);
  builder.finish(root, SWAP_ROUTE_EVENT_FILE_IDENTIFIER);
  return builder.asUint8Array().slice();
}

/**
 * Reads an event buffer into a plain object. Throws `TP_ERR_ENTRY_MALFORMED` when the bytes do
 * not carry the schema's file identifier `TPSR`.
 */
export function decodeSwapRouteEvent(bytes: Uint8Array): SwapRouteEvent {
  const bb = new flatbuffers.ByteBuffer(bytes);
  if (bytes.length < 8 || !FbSwapRouteEvent.bufferHasIdentifier(bb)) {
    throw new TpError(ErrorCode.EntryMalformed, 'not a SwapRouteEvent buffer (file identifier TPSR missing)', {
      context: { length: bytes.length },
    });
  }
  const event = FbSwapRouteEvent.getRootAsSwapRouteEvent(bb);
  const hops: SwapRouteHop[] = new Array<SwapRouteHop>(event.hopsLength());
  const hop = new FbRouteHop();
  for (let i = 0; i < hops.length; i++) {
    event.hops(i, hop);
    hops[i] = {
      pool: hop.pool() ?? '',
      dex: hop.dex() ?? '',
      inputMint: hop.inputMint() ?? '',
      outputMint: hop.outputMint() ?? '',
      inAmount: hop.inAmount(),
      outAmount: hop.outAmount(),
      fee: hop.fee(),
    };
  }
  return {
    schemaVersion: event.schemaVersion(),
    pairId: event.pairId() ?? '',
    routeHash: event.routeHash() ?? '',
    inputMint: event.inputMint() ?? '',
    outputMint: event.outputMint() ?? '',
    inputAmount: event.inputAmount(),
    localOutputAmount: event.localOutputAmount(),
    externalOutputAmount: event.externalOutputAmount(),
    estimatedProfit: event.estimatedProfit(),
    priceDifferencePct: event.priceDifferencePct(),
    bestSource: event.bestSource() === FbQuoteSource.External ? QuoteSource.External : QuoteSource.Local,
    confidence: event.confidence(),
    localConfidence: event.localConfidence(),
    externalConfidence: event.externalConfidence(),
    decision: DECISION_FROM_FB[event.decision()] ?? Decision.Skip,
    slot: event.slot(),
    quotedAtMs: Number(event.quotedAtMs()),
    createdAtMs: Number(event.createdAtMs()),
    hops,
  };
}

function checkU64(field: string, value: bigint): void {
  if (value < 0n || value > U64_MAX) {
    throw new TpError(ErrorCode.InvalidAmount, `${field} is not a u64`, { context: { field, value: value.toString() } });
  }
}

function msToU64(field: string, ms: number): bigint {
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new TpError(ErrorCode.InvalidAmount, `${field} is not a Unix time in ms`, { context: { field, value: ms } });
  }
  return BigInt(ms);
}
