/**
 * The quote service's handling of pool state updates (spec 02, Events, "Consumer handling of each
 * message", steps 1 to 4), transport-free: the bus consumer passes each message's bytes and then
 * acknowledges it whatever the outcome (step 5); the in-process scanner's cache sink reports the
 * updates it stored through `recordStored`.
 *
 * 1. Parse the JSON; on failure log, count `quote_service_bus_parse_errors_total`, and let the
 *    caller acknowledge (the message is dropped).
 * 2. reserveA / reserveB / slot from decimal strings to u64 (bigint).
 * 3. A PoolState with LastUpdated = now (the cache sets it), stored under the slot rule. The pool
 *    account in `state.rawData`, when present, is decoded so the cache can quote it.
 * 4. Count `quote_service_pool_updates_received_total`, record the processing latency in seconds.
 *
 * Every update also records the pool in the pool directory, so the RPC fallback knows it even when
 * the cache is disabled or has evicted it.
 */
import type { PoolCache, PoolStateUpdate, UpsertOutcome } from '../cache/index.js';
import { isPubkey } from '../chain/index.js';
import { DEX_KINDS, Dex, createDecoderRegistry, withAmmReserves, type DecoderRegistry } from '../dex/index.js';
import type { Logger } from '../obs/index.js';
import type { QuoteMetrics } from '../obs/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { PoolDirectory, PoolIdentity } from './pool-directory.js';

export interface PoolUpdateHandlerOptions {
  cache: PoolCache;
  directory: PoolDirectory;
  metrics: QuoteMetrics;
  /** Spec 02 `Cache.Enabled`; false: updates only feed the directory. Default true. */
  cacheEnabled?: boolean;
  logger?: Logger;
  /** Decodes `state.rawData`; default the mainnet program ids. */
  registry?: DecoderRegistry;
}

/** What became of one message. */
export type PoolUpdateOutcome = UpsertOutcome | 'parse_error' | 'cache_disabled';

const U64_DECIMAL = /^(0|[1-9][0-9]{0,19})$/;
const U64_MAX = 0xffff_ffff_ffff_ffffn;

/** A field of a pool state update event that is not what the format says: MessageInvalid naming it. */
class EventIssue extends TpError<typeof ErrorCode.MessageInvalid> {
  constructor(field: string, problem: string) {
    super(ErrorCode.MessageInvalid, `${field} ${problem}`, { context: { path: field } });
  }
}

function u64(value: unknown, field: string, optional = false): bigint | undefined {
  if (value === undefined && optional) return undefined;
  if (typeof value !== 'string' || !U64_DECIMAL.test(value)) throw new EventIssue(field, 'is not a u64 decimal string');
  const n = BigInt(value);
  if (n > U64_MAX) throw new EventIssue(field, 'is outside u64');
  return n;
}

function record(value: unknown, field: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new EventIssue(field, 'is not an object');
  return value as Record<string, unknown>;
}

function pubkey(value: unknown, field: string): string {
  if (typeof value !== 'string' || !isPubkey(value)) throw new EventIssue(field, 'is not a base58 public key');
  return value;
}

export class PoolUpdateHandler {
  private readonly cache: PoolCache;
  private readonly directory: PoolDirectory;
  private readonly metrics: QuoteMetrics;
  private readonly cacheEnabled: boolean;
  private readonly log: Logger | undefined;
  private readonly registry: DecoderRegistry;
  private readonly decoder = new TextDecoder();

  constructor(options: PoolUpdateHandlerOptions) {
    this.cache = options.cache;
    this.directory = options.directory;
    this.metrics = options.metrics;
    this.cacheEnabled = options.cacheEnabled ?? true;
    this.log = options.logger;
    this.registry = options.registry ?? createDecoderRegistry();
  }

  /**
   * One bus message (a PoolStateUpdateEvent as JSON). Never throws: the caller acknowledges the
   * message whatever comes back. `receivedAt` is the performance.now() of its receipt.
   */
  handleMessage(data: Uint8Array | string, receivedAt = performance.now()): PoolUpdateOutcome {
    let update: PoolStateUpdate;
    try {
      update = this.parse(typeof data === 'string' ? data : this.decoder.decode(data));
    } catch (err) {
      this.metrics.busParseErrors.inc();
      this.log?.warn({ err: err instanceof EventIssue || err instanceof SyntaxError ? err.message : err }, 'unparsable pool state update dropped');
      return 'parse_error';
    }
    return this.store(update, receivedAt);
  }

  /** One decoded update from the in-process scanner (no JSON). */
  handleUpdate(update: PoolStateUpdate, receivedAt = performance.now()): PoolUpdateOutcome {
    return this.store(update, receivedAt);
  }

  /**
   * An update someone else already stored in the cache (the in-process scanner's CachePoolStateSink
   * `onUpsert`): counted and remembered in the directory.
   */
  recordStored(pool: PoolIdentity, receivedAt?: number): void {
    this.directory.add(pool);
    this.metrics.poolUpdatesReceived.inc();
    if (receivedAt !== undefined) this.metrics.poolUpdateLatencySeconds.observe((performance.now() - receivedAt) / 1000);
  }

  /** The consumer's pending message count (JetStream `num_pending`). */
  setConsumerLag(messages: number): void {
    this.metrics.busConsumerLagMessages.set(messages);
  }

  private store(update: PoolStateUpdate, receivedAt: number): PoolUpdateOutcome {
    this.directory.add({ address: update.address, dex: update.dex as Dex, tokenA: update.tokenA, tokenB: update.tokenB });
    let outcome: PoolUpdateOutcome = 'cache_disabled';
    if (this.cacheEnabled) {
      try {
        outcome = this.cache.upsert(update);
      } catch (err) {
        // Values the parser let through but the cache refuses (cannot happen for u64-checked input).
        this.metrics.busParseErrors.inc();
        this.log?.warn({ err, pool: update.address }, 'pool state update refused by the cache');
        return 'parse_error';
      }
      if (outcome === 'ignored_older_slot') {
        this.log?.debug({ pool: update.address, slot: update.slot.toString() }, 'stale pool state update ignored (older slot)');
      }
    }
    this.metrics.poolUpdatesReceived.inc();
    this.metrics.poolUpdateLatencySeconds.observe((performance.now() - receivedAt) / 1000);
    return outcome;
  }

  private parse(text: string): PoolStateUpdate {
    const event = record(JSON.parse(text), 'event');
    const pool = record(event.pool, 'pool');
    const state = record(event.state, 'state');
    const dex = pool.dex;
    if (typeof dex !== 'string' || !(DEX_KINDS as readonly string[]).includes(dex)) throw new EventIssue('pool.dex', 'is not a known DEX');
    const update: PoolStateUpdate = {
      address: pubkey(pool.address, 'pool.address'),
      dex,
      tokenA: pubkey(pool.tokenA, 'pool.tokenA'),
      tokenB: pubkey(pool.tokenB, 'pool.tokenB'),
      reserveA: u64(state.reserveA, 'state.reserveA')!,
      reserveB: u64(state.reserveB, 'state.reserveB')!,
      slot: u64(state.slot, 'state.slot')!,
    };
    const writeVersion = u64(state.writeVersion, 'state.writeVersion', true);
    if (writeVersion !== undefined) update.writeVersion = writeVersion;
    const feeNumerator = u64(state.feeNumerator, 'state.feeNumerator', true);
    const feeDenominator = u64(state.feeDenominator, 'state.feeDenominator', true);
    if (feeNumerator !== undefined && feeDenominator !== undefined) {
      update.feeNumerator = feeNumerator;
      update.feeDenominator = feeDenominator;
    }
    if (state.rawData !== undefined) {
      if (typeof state.rawData !== 'string') throw new EventIssue('state.rawData', 'is not a base64 string');
      const bytes = Buffer.from(state.rawData, 'base64');
      try {
        const decoded = this.registry.decodeAccount(this.registry.programIdByDex[dex as Dex], bytes, update.address);
        if (decoded.kind === 'pool' && decoded.pool.tokenA === update.tokenA && decoded.pool.tokenB === update.tokenB) {
          // An AMM v4 AmmInfo has no reserves of its own: the event's are its effective reserves.
          update.pool = decoded.pool.dex === Dex.Amm ? withAmmReserves(decoded.pool, update.reserveA, update.reserveB) : decoded.pool;
        }
      } catch {
        // Stored without a decoded pool: the cache cannot quote it, the RPC fallback can.
      }
    }
    return update;
  }
}
