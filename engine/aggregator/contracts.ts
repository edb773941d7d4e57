/**
 * What the aggregator core needs from the parts beside it, as interfaces: the SwapRouteEvent
 * publisher (JetStream, `route-publisher.ts`) and the oracle price source (`oracle-prices.ts`).
 * The core is built and tested against these, so it runs without a bus or a price feed too.
 */
import type { SwapRouteEventFields } from './swap-route-event.js';

/** The publisher's counters (spec 01: "The publisher counts published events and errors"). */
export interface RoutePublisherStats {
  /** False when the aggregator runs without a bus: publish() then only counts `dropped`. */
  enabled: boolean;
  /** True while the bus connection is up. */
  connected: boolean;
  /** Events the stream acknowledged. */
  published: number;
  /** Publishes that failed (refused, timed out, or left unflushed at close). */
  errors: number;
  /** Publishes sent and not yet acknowledged, or queued. */
  pending: number;
  /** Events not sent because the queue was full or publishing is disabled. */
  dropped: number;
}

export interface RoutePublisher {
  /** Queues one event for asynchronous publication; never throws, never blocks the caller. */
  publish(fields: SwapRouteEventFields): void;
  stats(): RoutePublisherStats;
  /**
   * Graceful shutdown: flushes pending publishes within `timeoutMs`, counts what is left as
   * errors, then closes the connection. Idempotent.
   */
  close(timeoutMs: number): Promise<void>;
}

/** The oracle's price of a pair, from the mints' reference prices. */
export interface PairOraclePrice {
  /** UI units of outputMint per UI unit of inputMint. */
  price: number;
  /** Base units of outputMint per base unit of inputMint (price × 10^(outputDecimals − inputDecimals)). */
  atomPrice: number;
  inputDecimals: number;
  outputDecimals: number;
  /** When the older of the two mint prices was fetched, Unix ms. */
  updatedAtMs: number;
}

export interface OraclePriceSource {
  /** Asks the source to keep prices for these mints from now on (idempotent). */
  track(mints: readonly string[]): void;
  /** The oracle price of the pair, or undefined when either mint's price is unknown. */
  pairPrice(inputMint: string, outputMint: string): PairOraclePrice | undefined;
  close(): Promise<void>;
}
