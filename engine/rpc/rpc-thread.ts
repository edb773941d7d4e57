/**
 * RpcThread: getMultipleAccounts made by a worker thread (rpc-worker.ts) that owns the RpcClient,
 * so the HTTP exchange, JSON.parse and base64 decoding of every read cost the worker's CPU, not
 * the main thread's (docs/architecture.md §1). An AccountsSource: WorkerAccountFetcher puts the batching,
 * coalesced AccountFetcher in front of it.
 *
 *   main thread                                         RPC worker
 *   getMultipleAccounts(keys) ── request ring ──────▶  RpcClient.getMultipleAccounts
 *     pending[callId]                                      │ (undici, JSON.parse, base64)
 *     drain ◀──── Atomics.waitAsync ── answer ring ◀────────┘ accounts in parts, or the error
 *
 * Calls cross in SharedArrayBuffer byte rings (engine/threads/byte-ring.ts; record layouts in
 * rpc-ring-layout.ts), never in structured-clone messages. The main thread writes a call's keys
 * (one copy), the worker writes each answer once, and the main thread copies every account's data
 * out of the ring once (AnswerDecoder), so the AccountData it resolves with outlives the ring
 * space. One drain loop per worker reads answers while calls are pending (Atomics.waitAsync on the
 * answer ring: one waiter, never blocking the event loop); the worker is unref'd while idle.
 *
 * Bounds: the request ring holds `requestRingBytes` of calls not yet taken by the worker; a call
 * that does not fit is refused at once with RpcRequestRingFull (a FetchQueueFull), counted. The
 * worker takes at most `maxInFlight` calls at once; an answer waits in the worker when the answer
 * ring is full (see rpc-worker.ts). Nothing grows without bound.
 *
 * Failures: a call the worker's client fails is rejected with an RpcFailure of the same kind,
 * message, endpoint, method, JSON-RPC code and HTTP status (the `cause` stays in the worker). If
 * the worker dies, its pending calls are rejected with RpcWorkerUnavailable('exited') and the next
 * call starts a new worker. close() lets the worker answer every call already written, then ends it.
 *
 * Aborts: a call's signal rejects it at once with the signal's reason and messages the worker
 * (RpcWorkerAbort), which aborts the call's HTTP request, or answers the call without sending it
 * when it has not taken it yet; the answer that still comes is read and dropped.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { byteRingStats, ByteRingReader, ByteRingWriter, createByteRing, type ByteRingStats } from '../threads/index.js';
import { ErrorCode, TpError, invalidArgument } from '../errors.js';
import type { AccountsSource } from './account-fetcher.js';
import { RpcClient, type AccountData, type MultipleAccountsResult, type RpcClientOptions } from './rpc-client.js';
import type { FetchQueueFull } from './rpc-errors.js';
import { AnswerDecoder, encodeRequest } from './rpc-records.js';
import { ANSWER_ERROR } from './rpc-ring-layout.js';
import type { RpcWorkerAbort, RpcWorkerData } from './rpc-worker.js';

/** The compiled worker module beside this one (the dist/ build). */
export const DEFAULT_RPC_WORKER = fileURLToPath(new URL('./rpc-worker.js', import.meta.url));
export const DEFAULT_REQUEST_RING_BYTES = 1 << 18;
export const DEFAULT_ANSWER_RING_BYTES = 1 << 23;
export const DEFAULT_MAX_IN_FLIGHT = 64;
/** Timeout of the drain loop's wait, ms: a safety net (the worker notifies). */
const DRAIN_WAIT_MS = 1000;

/** The request ring is full: the call was refused, not queued (the worker is behind). A FetchQueueFull with `ringBytes`. */
export function rpcRequestRingFull(ringBytes: number): FetchQueueFull {
  return new TpError(ErrorCode.FetchQueueFull, `rpc request ring full (${ringBytes} bytes of calls waiting for the RPC worker)`, {
    context: { limit: ringBytes, ringBytes },
  });
}

/** The RPC worker cannot answer: the fetcher was closed, or the worker ended before answering. */
export type RpcWorkerUnavailable = TpError<typeof ErrorCode.RpcWorkerUnavailable>;

export function rpcWorkerUnavailable(reason: 'closed' | 'exited', message: string, options?: { cause?: unknown }): RpcWorkerUnavailable {
  return new TpError(ErrorCode.RpcWorkerUnavailable, message, { cause: options?.cause, context: { reason } });
}

export interface RpcThreadOptions {
  /** Bytes of the request ring, a power of two (the calls the worker has not taken). Default 256 KiB. */
  requestRingBytes?: number;
  /**
   * Bytes of the answer ring, a power of two. One record holds up to half of it; a larger answer
   * goes in parts, and a single account larger than a record fails its call. Default 8 MiB.
   */
  answerRingBytes?: number;
  /** Calls the worker makes at once. Default 64. */
  maxInFlight?: number;
  /** The compiled worker module. Default: rpc-worker.js beside this module (the dist/ build). */
  filename?: string;
}

export interface RpcThreadStats {
  /** Calls written to the request ring. */
  calls: number;
  /** Calls refused because the request ring was full (RpcRequestRingFull). */
  ringFull: number;
  /** Answer records read (a call's answer may take several). */
  answerRecords: number;
  /** Calls written and not yet answered. */
  pending: number;
  /** Workers started (the first, and one after each worker that died). */
  workerStarts: number;
  /** Workers that ended without being closed. */
  workerDeaths: number;
  requestRing: ByteRingStats | null;
  answerRing: ByteRingStats | null;
}

interface PendingCall {
  resolve: (result: MultipleAccountsResult) => void;
  reject: (err: unknown) => void;
  /** Filled part by part; created at the first part. */
  accounts: (AccountData | null)[] | null;
  slot: bigint;
  /** Its signal aborted: it was rejected, and its answer is read and dropped. */
  abandoned: boolean;
}

/** One worker and its two rings. */
class Session {
  readonly requests: ByteRingWriter;
  readonly answers: ByteRingReader;
  readonly pending = new Map<number, PendingCall>();
  draining = false;
  closing = false;
  exited = false;
  error: Error | undefined;
  readonly exit: Promise<void>;
  resolveExit!: () => void;

  constructor(
    readonly worker: Worker,
    readonly requestRing: SharedArrayBuffer,
    readonly answerRing: SharedArrayBuffer,
  ) {
    this.requests = new ByteRingWriter(requestRing);
    this.answers = new ByteRingReader(answerRing);
    this.exit = new Promise((resolve) => (this.resolveExit = resolve));
  }
}

export class RpcThread implements AccountsSource {
  readonly requestRingBytes: number;
  readonly answerRingBytes: number;
  readonly maxInFlight: number;
  readonly filename: string;
  private readonly rpc: RpcClientOptions;
  private session: Session | null = null;
  private closing: Promise<void> | null = null;
  private nextCallId = 0;
  private readonly scratch: Buffer;
  private readonly decoder = new AnswerDecoder();
  private calls = 0;
  private ringFull = 0;
  private answerRecords = 0;
  private workerStarts = 0;
  private workerDeaths = 0;

  constructor(rpc: RpcClientOptions, options: RpcThreadOptions = {}) {
    // The worker builds the client; building one here too checks the options with the client's
    // own errors, at construction. It opens no connection.
    void new RpcClient(rpc).close();
    this.rpc = { ...rpc, endpoints: [...rpc.endpoints] };
    this.requestRingBytes = options.requestRingBytes ?? DEFAULT_REQUEST_RING_BYTES;
    this.answerRingBytes = options.answerRingBytes ?? DEFAULT_ANSWER_RING_BYTES;
    this.maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    if (!Number.isInteger(this.maxInFlight) || this.maxInFlight < 1) throw invalidArgument('maxInFlight', this.maxInFlight, `maxInFlight must be >= 1, got ${this.maxInFlight}`);
    this.filename = options.filename ?? DEFAULT_RPC_WORKER;
    this.session = this.start(); // also checks the ring sizes
    this.scratch = Buffer.allocUnsafeSlow(this.session.requests.maxPayloadBytes);
  }

  /**
   * One call, made by the worker. Rejects at once with RpcRequestRingFull when the ring is full.
   * `signal` aborts it: the call rejects with its reason and the worker aborts its request.
   */
  getMultipleAccounts(addresses: readonly string[], signal?: AbortSignal): Promise<MultipleAccountsResult> {
    if (this.closing !== null) return Promise.reject(rpcWorkerUnavailable('closed', 'getMultipleAccounts: the RPC worker is closed'));
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    const s = (this.session ??= this.start());
    const callId = (this.nextCallId = (this.nextCallId + 1) >>> 0);
    let length: number;
    try {
      length = encodeRequest(this.scratch, callId, addresses);
    } catch (err) {
      return Promise.reject(err);
    }
    if (length < 0) {
      return Promise.reject(
        invalidArgument('addresses', addresses.length, `getMultipleAccounts: a call of ${addresses.length} keys is larger than a request record (${this.scratch.length} bytes)`),
      );
    }
    if (!s.requests.tryWrite(0, 0, this.scratch.subarray(0, length))) {
      this.ringFull++;
      return Promise.reject(rpcRequestRingFull(this.requestRingBytes));
    }
    this.calls++;
    const promise = new Promise<MultipleAccountsResult>((resolve, reject) => {
      const call: PendingCall = { resolve, reject, accounts: null, slot: 0n, abandoned: false };
      if (signal !== undefined) this.watch(s, callId, call, signal);
      s.pending.set(callId, call);
    });
    if (s.pending.size === 1) s.worker.ref(); // a call in flight keeps the process alive, as a socket would
    if (!s.draining) void this.drain(s);
    return promise;
  }

  /** At the abort of `signal`: rejects the call with its reason and tells the worker to abort it. */
  private watch(s: Session, callId: number, call: PendingCall, signal: AbortSignal): void {
    const { resolve, reject } = call;
    const onAbort = (): void => {
      call.abandoned = true;
      reject(signal.reason as Error);
      if (!s.exited) s.worker.postMessage({ abort: callId } satisfies RpcWorkerAbort);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    call.resolve = (result) => {
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    call.reject = (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(err);
    };
  }

  /** Lets the worker answer every call already written, then ends it. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const s = this.session;
      if (s === null) return;
      s.closing = true;
      s.worker.ref();
      s.requests.close();
      await s.exit;
    })();
    return this.closing;
  }

  statistics(): RpcThreadStats {
    const s = this.session;
    return {
      calls: this.calls,
      ringFull: this.ringFull,
      answerRecords: this.answerRecords,
      pending: s?.pending.size ?? 0,
      workerStarts: this.workerStarts,
      workerDeaths: this.workerDeaths,
      requestRing: s === null ? null : byteRingStats(s.requestRing),
      answerRing: s === null ? null : byteRingStats(s.answerRing),
    };
  }

  private start(): Session {
    const requestRing = createByteRing(this.requestRingBytes);
    const answerRing = createByteRing(this.answerRingBytes);
    const workerData: RpcWorkerData = { requests: requestRing, answers: answerRing, rpc: this.rpc, maxInFlight: this.maxInFlight };
    const worker = new Worker(this.filename, { workerData });
    worker.unref();
    const s = new Session(worker, requestRing, answerRing);
    worker.on('error', (err: Error) => {
      s.error ??= err;
    });
    worker.once('exit', (code: number) => this.exited(s, code));
    this.workerStarts++;
    return s;
  }

  /** Reads answers while calls are pending, waiting without blocking the event loop. */
  private async drain(s: Session): Promise<void> {
    s.draining = true;
    try {
      for (;;) {
        this.readAnswers(s);
        if (s.pending.size === 0 || s.exited) return;
        // The worker closes the answer ring only after its last answer: what is still pending
        // then is settled by the exit handler (a closed ring would not make the wait below wait).
        if (s.answers.closed && !s.answers.hasData()) return;
        await s.answers.waitForDataAsync(DRAIN_WAIT_MS);
      }
    } catch (err) {
      // A record this side cannot read: the rings can no longer be trusted.
      this.fail(s, rpcWorkerUnavailable('exited', `getMultipleAccounts: unreadable answer from the RPC worker (${(err as Error).message})`, { cause: err }));
      void s.worker.terminate();
    } finally {
      s.draining = false;
      if (s.pending.size === 0 && !s.closing && !s.exited) s.worker.unref();
    }
  }

  private readAnswers(s: Session): void {
    const decoder = this.decoder;
    for (let record = s.answers.tryRead(); record !== null; record = s.answers.tryRead()) {
      this.answerRecords++;
      const payload = record.payload;
      decoder.header(payload);
      const callId = decoder.callId;
      const call = s.pending.get(callId);
      if (call === undefined) throw new TpError(ErrorCode.Internal, `RPC worker answered call ${callId}, which is not pending`, { context: { callId } });
      if (call.abandoned) {
        // Its caller is gone: the answer (the abort, or what came before it) is not read.
        if (decoder.type === ANSWER_ERROR || decoder.last) s.pending.delete(callId);
        continue;
      }
      if (decoder.type === ANSWER_ERROR) {
        s.pending.delete(callId);
        call.reject(decoder.error(payload));
        continue;
      }
      if (call.accounts === null) {
        call.accounts = new Array<AccountData | null>(decoder.total);
        call.slot = record.slotBigInt();
      }
      decoder.accounts(payload, call.slot, call.accounts);
      if (decoder.last) {
        s.pending.delete(callId);
        call.resolve({ slot: call.slot, accounts: call.accounts });
      }
    }
  }

  private exited(s: Session, code: number): void {
    s.exited = true;
    if (!s.closing) this.workerDeaths++;
    try {
      this.readAnswers(s); // what the worker wrote before it ended
    } catch {
      // unreadable: the calls left are rejected below
    }
    const why = s.error === undefined ? `code ${code}` : s.error.message;
    this.fail(s, rpcWorkerUnavailable('exited', `getMultipleAccounts: the RPC worker ended before answering (${why})`, { cause: s.error }));
    if (this.session === s && !s.closing) this.session = null; // the next call starts a new worker
    s.resolveExit();
  }

  private fail(s: Session, err: Error): void {
    for (const call of s.pending.values()) call.reject(err);
    s.pending.clear();
  }
}
