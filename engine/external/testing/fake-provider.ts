/**
 * Test support: a small node:http provider of `GET /quote` whose answers the test scripts (status,
 * body, headers, or no answer at all), recording when each request arrived; and a gRPC client of
 * StreamBatchQuotes that collects what a stream receives.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import * as grpc from '@grpc/grpc-js';

import { closeServer } from '../../obs/http-listen.js';
import { loadTidepoolProto } from '../../proto.js';
import type { UpstreamQuote } from '../../quote/quote-wire.js';

export const WSOL = 'So11111111111111111111111111111111111111112';
export const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
export const BONK = 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263';
export const POOL_A = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';
export const POOL_B = 'HLmqeL62xR1QoZ1HKKbXRrdN1p3phKpxRMb2VVopvBBz';

export interface FakeRequest {
  /** performance.now() at arrival. */
  at: number;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
}

export type FakeAnswer = { status: number; body: string; headers?: Record<string, string> } | 'hang';

/** A valid one-hop answer for the query: out = amount × 2 (fee 0.25 % of the input, in the input mint). */
export function okAnswer(query: URLSearchParams, contextSlot = 250_000_000): FakeAnswer {
  const inputMint = query.get('inputMint')!;
  const outputMint = query.get('outputMint')!;
  const amount = BigInt(query.get('amount')!);
  const slippageBps = Number(query.get('slippageBps') ?? 50);
  const out = amount * 2n;
  const body = {
    inputMint,
    inAmount: amount.toString(),
    outputMint,
    outAmount: out.toString(),
    otherAmountThreshold: ((out * BigInt(10_000 - slippageBps)) / 10_000n).toString(),
    swapMode: 'ExactIn',
    slippageBps,
    platformFee: null,
    priceImpactPct: '0.0012',
    routePlan: [{ swapInfo: { ammKey: POOL_A, label: 'Raydium', inputMint, outputMint, inAmount: amount.toString(), outAmount: out.toString(), feeAmount: ((amount * 25n) / 10_000n).toString(), feeMint: inputMint }, percent: 100, bps: 10_000 }],
    contextSlot,
    timeTaken: 0.001,
  };
  return { status: 200, body: JSON.stringify(body) };
}

export class FakeProvider {
  readonly requests: FakeRequest[] = [];
  /** What to answer to the n-th request (0-based); default okAnswer. */
  answer: (query: URLSearchParams, n: number) => FakeAnswer = (q) => okAnswer(q);
  private readonly server: Server;
  private port = 0;

  constructor() {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const n = this.requests.length;
      this.requests.push({ at: performance.now(), query: url.searchParams, headers: req.headers });
      const a = this.answer(url.searchParams, n);
      if (a === 'hang') return;
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(a.body);
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this.url;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/swap/v1/quote`;
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }
}

export interface StreamPairInput {
  inputMint: string;
  outputMint: string;
  amount: string;
}

/** One StreamBatchQuotes call and what it received. */
export class StreamProbe {
  readonly quotes: UpstreamQuote[] = [];
  error: grpc.ServiceError | undefined;
  ended = false;
  private readonly client: grpc.Client;
  private readonly call: grpc.ClientReadableStream<UpstreamQuote>;

  constructor(target: string, request: { pairs: StreamPairInput[]; slippageBps?: number; updateIntervalMs?: number }, metadata = new grpc.Metadata()) {
    const Ctor = loadTidepoolProto().QuoteService;
    this.client = new Ctor(target, grpc.credentials.createInsecure());
    const fn = (this.client as unknown as Record<string, (req: unknown, md: grpc.Metadata) => grpc.ClientReadableStream<UpstreamQuote>>)['StreamBatchQuotes']!;
    this.call = fn.call(this.client, request, metadata);
    this.call.on('data', (q: UpstreamQuote) => this.quotes.push(q));
    this.call.on('error', (err: grpc.ServiceError) => (this.error = err));
    this.call.on('end', () => (this.ended = true));
  }

  cancel(): void {
    this.call.cancel();
  }

  close(): void {
    this.call.cancel();
    this.client.close();
  }
}

/** Polls `probe` every 10 ms until it returns a value other than undefined, or throws after `ms`. */
export async function eventually<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, what = 'condition', ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
