/**
 * Test doubles for the aggregator: a real gRPC QuoteService upstream the test controls (quotes,
 * delays, death and return on the same port), quote builders, an in-memory RoutePublisher and a
 * fixed OraclePriceSource, and a client of the aggregator. Not used in production.
 */
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';

import { loadTidepoolProto } from '../proto.js';
import type { WireBatchQuoteRequest, WirePairAmount, WireQuote, WireQuoteError, WireRouteHop } from '../quote/quote-wire.js';
import { defaultAggregatorConfig, type AggregatorConfig } from './aggregator-config.js';
import { createAggregator, type Aggregator, type AggregatorDeps } from './aggregator.js';
import type { OraclePriceSource, PairOraclePrice, RoutePublisher, RoutePublisherStats } from './contracts.js';
import { pairId, type SwapRouteEventFields } from './swap-route-event.js';

export const SOL = 'So11111111111111111111111111111111111111112';
export const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
export const USDT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
export const POOL_A = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';
export const POOL_B = 'HJPjoWUrhoZzkNfRpHuieeFk9WcZWjwy6PBjZ81ngndJ';

export const silentLogger = (): AggregatorDeps['logger'] => pino({ level: 'silent' });

export interface QuoteOptions {
  pool?: string;
  hops?: number;
  poolAgeSeconds?: number | undefined;
  priceImpact?: number;
  providerUptime?: number;
  slot?: string;
  quotedAtUnixMs?: number;
}

/** An upstream-side quote of `amount` → `output` through `hops` pools (a 2-hop route goes via USDT). */
export function makeQuote(pair: WirePairAmount, output: bigint | string, o: QuoteOptions = {}): WireQuote {
  const hopsCount = o.hops ?? 1;
  const route: WireRouteHop[] = [];
  for (let i = 0; i < hopsCount; i++) {
    const hop: WireRouteHop = {
      pool: i === 0 ? (o.pool ?? POOL_A) : POOL_B,
      dex: 'dexa_amm',
      inputMint: i === 0 ? pair.inputMint : USDT,
      outputMint: i === hopsCount - 1 ? pair.outputMint : USDT,
      inAmount: pair.amount,
      outAmount: String(output),
      fee: '25',
      slot: o.slot ?? '100',
    };
    if (o.poolAgeSeconds !== undefined) hop.poolAgeSeconds = o.poolAgeSeconds;
    route.push(hop);
  }
  const quote: WireQuote = {
    pairId: pairId(pair.inputMint, pair.outputMint, BigInt(pair.amount)),
    inputMint: pair.inputMint,
    outputMint: pair.outputMint,
    inputAmount: pair.amount,
    outputAmount: String(output),
    minOutputAmount: String(output),
    slippageBps: 0,
    priceImpact: o.priceImpact ?? 0,
    route,
    slot: o.slot ?? '100',
    contextSlot: o.slot ?? '100',
    stateAgeMs: 5,
    source: 'QUOTE_SOURCE_UNSPECIFIED',
    origin: 'QUOTE_ORIGIN_CACHE',
    provider: 'test',
    quotedAtUnixMs: String(o.quotedAtUnixMs ?? Date.now()),
    receivedAtUnixMs: '0',
    routeHash: '',
    error: null,
    swapMode: 'SWAP_MODE_EXACT_IN',
    maxInputAmount: pair.amount,
  };
  if (o.providerUptime !== undefined) quote.providerUptime = o.providerUptime;
  return quote;
}

/** An upstream "cannot quote" for a pair. */
export function makeErrorQuote(pair: WirePairAmount, error: WireQuoteError = { code: 'TP_ERR_NO_POOL_FOR_PAIR', grpcStatus: 5, message: 'no pool' }): WireQuote {
  return { ...makeQuote(pair, 0n), route: [], outputAmount: '0', minOutputAmount: '0', maxInputAmount: '0', error };
}

/** What a fake upstream answers for a pair: a quote, or undefined for silence. */
export type Responder = (pair: WirePairAmount) => WireQuote | undefined;

/** A real QuoteService server on 127.0.0.1 that the test steers. */
export class FakeUpstream {
  /** Every StreamBatchQuotes request received, in order. */
  readonly requests: WireBatchQuoteRequest[] = [];
  /** The metadata of each request, in the same order. */
  readonly metadata: grpc.Metadata[] = [];
  /** Open calls. */
  readonly calls = new Set<grpc.ServerWritableStream<WireBatchQuoteRequest, WireQuote>>();
  respond: Responder = () => undefined;
  /** Delay before a call's first answers, ms. */
  delayMs = 0;
  /** Calls the client cancelled before they had written anything. */
  unansweredCancels = 0;
  port = 0;
  /** Serve over TLS with this certificate and key (PEM); undefined: plaintext. */
  tls: { cert: string; key: string } | undefined;
  private server: grpc.Server | undefined;

  async start(port = 0): Promise<number> {
    const server = new grpc.Server();
    server.addService(loadTidepoolProto().QuoteService.service, {
      StreamBatchQuotes: (call: grpc.ServerWritableStream<WireBatchQuoteRequest, WireQuote>) => {
        this.requests.push(call.request);
        this.metadata.push(call.metadata);
        this.calls.add(call);
        let answered = false;
        call.on('cancelled', () => {
          if (!answered) this.unansweredCancels++;
          this.calls.delete(call);
        });
        call.on('close', () => this.calls.delete(call));
        const send = (): void => {
          for (const pair of call.request.pairs) {
            const q = this.respond(pair);
            if (q !== undefined && !call.cancelled) {
              call.write(q);
              answered = true;
            }
          }
        };
        if (this.delayMs > 0) setTimeout(send, this.delayMs);
        else send();
      },
    });
    this.server = server;
    this.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(
        `127.0.0.1:${port}`,
        this.tls === undefined ? grpc.ServerCredentials.createInsecure() : grpc.ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(this.tls.cert), private_key: Buffer.from(this.tls.key) }], false),
        (err, p) => (err ? reject(err) : resolve(p)),
      ),
    );
    return this.port;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Writes `quote` on every open call whose request has its pair. */
  push(quote: WireQuote): void {
    for (const call of this.calls) {
      if (call.request.pairs.some((p) => pairId(p.inputMint, p.outputMint, BigInt(p.amount)) === quote.pairId)) call.write(quote);
    }
  }

  /** Dies at once: every call fails with UNAVAILABLE on the client. */
  kill(): void {
    this.server?.forceShutdown();
    this.server = undefined;
    this.calls.clear();
  }

  /** Comes back on the same port. */
  restart(): Promise<number> {
    return this.start(this.port);
  }

  close(): void {
    this.kill();
  }
}

/** Captures every published event. */
export class MemoryPublisher implements RoutePublisher {
  readonly events: SwapRouteEventFields[] = [];
  closedWith: number | undefined;
  publish(fields: SwapRouteEventFields): void {
    this.events.push(fields);
  }
  stats(): RoutePublisherStats {
    return { enabled: true, connected: true, published: this.events.length, errors: 0, pending: 0, dropped: 0 };
  }
  close(timeoutMs: number): Promise<void> {
    this.closedWith = timeoutMs;
    return Promise.resolve();
  }
}

/** Fixed oracle prices, by "inputMint:outputMint". */
export class FixedOracle implements OraclePriceSource {
  readonly tracked = new Set<string>();
  constructor(readonly prices: Map<string, PairOraclePrice> = new Map()) {}
  setAtomPrice(inputMint: string, outputMint: string, atomPrice: number): void {
    this.prices.set(`${inputMint}:${outputMint}`, { price: atomPrice, atomPrice, inputDecimals: 0, outputDecimals: 0, updatedAtMs: Date.now() });
  }
  track(mints: readonly string[]): void {
    for (const m of mints) this.tracked.add(m);
  }
  pairPrice(inputMint: string, outputMint: string): PairOraclePrice | undefined {
    return this.prices.get(`${inputMint}:${outputMint}`);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

export interface TestAggregator {
  aggregator: Aggregator;
  client: grpc.Client & Record<string, (...args: never[]) => unknown>;
  grpcPort: number;
  httpPort: number;
  publisher: MemoryPublisher;
  close(): Promise<void>;
}

/**
 * An aggregator on port 0 against the given upstreams, with a client. GetAggregatedQuote's overall
 * deadline is widened to 2 s (a loaded test box may take longer than 150 ms to open a first call);
 * tests of the 150 ms limit pass `unaryDeadlineMs: GET_AGGREGATED_QUOTE_TIMEOUT_MS`.
 */
export async function startTestAggregator(
  local: FakeUpstream | string,
  external: FakeUpstream | string,
  overrides: Partial<AggregatorConfig> = {},
  deps: Partial<AggregatorDeps> = {},
): Promise<TestAggregator> {
  const publisher = (deps.publisher as MemoryPublisher | undefined) ?? new MemoryPublisher();
  const config = defaultAggregatorConfig({
    grpcPort: 0,
    httpPort: 0,
    localQuoteAddr: typeof local === 'string' ? local : local.address,
    externalQuoteAddr: typeof external === 'string' ? external : external.address,
    shutdownTimeout: 1000,
    // Tests ask for 20 ms pushes: below the default minimum interval (100 ms), allowed here.
    streamMinInterval: 10,
    ...overrides,
  });
  const aggregator = createAggregator(config, { logger: silentLogger(), backoff: { initialMs: 20, maxMs: 200 }, unaryDeadlineMs: 2000, ...deps, publisher });
  const { grpcPort, httpPort } = await aggregator.start();
  const Ctor = loadTidepoolProto().QuoteAggregatorService;
  const client = new Ctor(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure()) as TestAggregator['client'];
  return {
    aggregator,
    client,
    grpcPort,
    httpPort,
    publisher,
    async close() {
      client.close();
      await aggregator.close();
    },
  };
}

/** Unary call as a promise. */
export function unaryCall<T>(client: TestAggregator['client'], method: string, request: object): Promise<T> {
  return new Promise((resolve, reject) => {
    (client[method] as unknown as (r: object, cb: (err: grpc.ServiceError | null, res: T) => void) => void)(request, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

/** Polls `check` until it returns without throwing (or `timeoutMs` passes, then rethrows). */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5000, everyMs = 10): Promise<T> {
  const start = Date.now();
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() - start > timeoutMs) throw err;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}
