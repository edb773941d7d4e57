/**
 * The RPC worker thread (started by RpcThread, rpc-thread.ts; runs from dist/): owns an RpcClient
 * and does the part of an account read that costs CPU (the HTTP exchange, JSON.parse, base64)
 * off the main thread. It takes getMultipleAccounts calls from the request ring, makes them, and
 * writes each answer (accounts, or the client's RpcFailure) to the answer ring.
 *
 * Waiting. Not the parse workers' blocking Atomics.wait: this thread's event loop must keep running,
 * since undici delivers the answers there and watches its keep-alive sockets there, and a thread
 * blocked in Atomics.wait runs nothing. It waits for calls with Atomics.waitAsync on the request
 * ring (the same WAITING/SIGNAL protocol, so the main thread's notify wakes it), one wait at a
 * time: a second waiter would clear the ring's WAITING word when it returns while the first still
 * sleeps, and the main thread would then skip the notify.
 *
 * Bounds. At most `maxInFlight` calls are taken from the request ring at once (answered calls not
 * yet written count); the rest wait in the ring, and once it is full the main thread refuses new
 * calls (FetchQueueFull). An answer the answer ring has no room for waits in `backlog` (at most
 * maxInFlight) and is retried every BACKLOG_RETRY_MS: a slow reader stalls the worker, never
 * grows it.
 *
 * Aborts: the main thread posts RpcWorkerAbort for a call whose caller stopped waiting. A call in
 * flight has its request aborted (its connection closed); a call not yet taken from the ring is
 * answered with the abort when it is taken, and never sent.
 *
 * Closing: once the main thread closes the request ring, the worker answers every call written
 * before, closes its client and the answer ring, and exits.
 */
import { parentPort, workerData } from 'node:worker_threads';

import { ErrorCode, TpError } from '../errors.js';

import { ByteRingReader, ByteRingWriter } from '../threads/index.js';
import { RpcClient, type MultipleAccountsResult, type RpcClientOptions } from './rpc-client.js';
import { rpcFailure } from './rpc-errors.js';
import { AnswerEncoder, decodeRequest } from './rpc-records.js';

export interface RpcWorkerData {
  /** Request ring (the worker reads). */
  requests: SharedArrayBuffer;
  /** Answer ring (the worker writes). */
  answers: SharedArrayBuffer;
  rpc: RpcClientOptions;
  maxInFlight: number;
}

/** Posted by the main thread: stop call `abort` (its caller's signal aborted). */
export interface RpcWorkerAbort {
  abort: number;
}

/** Timeout of a waitAsync on the request ring, ms (a safety net: writers notify). */
const WAIT_MS = 1000;
const BACKLOG_RETRY_MS = 1;
const METHOD = 'getMultipleAccounts';

interface Answer {
  callId: number;
  result: MultipleAccountsResult | undefined;
  error: unknown;
  /** Index of the next account to write (answers too large for one record go in parts). */
  next: number;
}

const { requests: requestRing, answers: answerRing, rpc, maxInFlight } = workerData as RpcWorkerData;
const requests = new ByteRingReader(requestRing);
const answers = new ByteRingWriter(answerRing);
const encoder = new AnswerEncoder(answers.maxPayloadBytes);
const client = new RpcClient(rpc);
const endpoints = client.endpoints.join(' ');

/** Calls taken from the request ring whose answer is not yet fully written. */
let inFlight = 0;
/** The requests in flight, by call id. */
const requestsInFlight = new Map<number, AbortController>();
/** Calls aborted before they were taken from the ring (ids after `lastTaken`). */
const abortedAhead = new Set<number>();
/** The id of the last call taken; ids grow in ring order (wrapping at 2^32). */
let lastTaken = 0;
let waiting = false;
let finished = false;
const backlog: Answer[] = [];
let retry: NodeJS.Timeout | null = null;
// A pending Atomics.waitAsync does not keep a thread's event loop alive: without a ref'd handle an
// idle worker would end. It ends in finish(), once the request ring is closed and drained.
const keepAlive = setInterval(() => {}, 1 << 30);

/** Takes what calls it may, then waits for more if it may take more (see Waiting, above). */
function pump(): void {
  for (;;) {
    takeCalls();
    if (!requests.closed) {
      if (inFlight < maxInFlight) waitAsync(); // at maxInFlight, the next answer pumps
      return;
    }
    // Closed, read before HEAD: every call written before close is visible to hasData now. A
    // closed ring wakes every wait at once, so from here on only the answers pump.
    if (inFlight > 0) return;
    if (!requests.hasData()) {
      finish();
      return;
    }
  }
}

function waitAsync(): void {
  if (waiting) return;
  waiting = true;
  void requests.waitForDataAsync(WAIT_MS).then(() => {
    waiting = false;
    pump();
  });
}

function takeCalls(): void {
  while (inFlight < maxInFlight) {
    const record = requests.tryRead();
    if (record === null) return;
    const { callId, addresses } = decodeRequest(record.payload);
    requests.release(); // the keys are copied: give the space back at once
    inFlight++;
    lastTaken = callId;
    let call: Promise<MultipleAccountsResult>;
    if (abortedAhead.delete(callId)) {
      call = Promise.reject(abortedCall(callId));
    } else {
      const controller = new AbortController();
      requestsInFlight.set(callId, controller);
      call = client.getMultipleAccounts(addresses, controller.signal);
    }
    call.then(
      (result) => answer({ callId, result, error: undefined, next: 0 }),
      (error: unknown) => answer({ callId, result: undefined, error, next: 0 }),
    );
  }
}

function abortedCall(callId: number): TpError {
  return new TpError(ErrorCode.Aborted, `${METHOD}: call ${callId} aborted by its caller`, { context: { reason: 'caller aborted' } });
}

/** The main thread's RpcWorkerAbort: aborts the call's request, or marks a call not yet taken. */
function abortCall(callId: number): void {
  const controller = requestsInFlight.get(callId);
  if (controller !== undefined) controller.abort(abortedCall(callId));
  else if (((callId - lastTaken) | 0) > 0) abortedAhead.add(callId); // still in the ring; else answered already
}

parentPort?.on('message', (message: RpcWorkerAbort) => abortCall(message.abort));

function answer(a: Answer): void {
  requestsInFlight.delete(a.callId);
  if (a.result !== undefined) {
    const problem = encoder.problem(a.result.accounts);
    if (problem !== null) {
      a.result = undefined;
      a.error = rpcFailure('malformed', `${METHOD}: ${problem}`, { endpoint: endpoints, method: METHOD });
    }
  }
  backlog.push(a);
  writeBacklog();
}

/** Writes the waiting answers in order, as far as the answer ring has room. */
function writeBacklog(): void {
  let written = 0;
  while (written < backlog.length && write(backlog[written]!)) written++;
  if (written > 0) {
    backlog.splice(0, written);
    inFlight -= written;
  }
  if (backlog.length > 0 && retry === null) {
    retry = setTimeout(() => {
      retry = null;
      writeBacklog();
    }, BACKLOG_RETRY_MS);
  }
  if (written > 0) pump();
}

/** Writes what is left of an answer; false when the answer ring has no room now (retry later). */
function write(a: Answer): boolean {
  const result = a.result;
  if (result === undefined) {
    const record = encoder.error(a.callId, a.error);
    if (!answers.fits(record.length)) return false;
    return answers.tryWriteSlotWords(0, 0, Date.now(), record);
  }
  const slotLo = Number(result.slot & 0xffff_ffffn);
  const slotHi = Number((result.slot >> 32n) & 0xffff_ffffn);
  const accounts = result.accounts;
  do {
    const end = encoder.partEnd(accounts, a.next);
    const record = encoder.accounts(a.callId, accounts, a.next, end);
    // fits() first: a refused tryWrite would count as a drop in the ring's counters.
    if (!answers.fits(record.length)) return false;
    answers.tryWriteSlotWords(slotLo, slotHi, Date.now(), record);
    a.next = end;
  } while (a.next < accounts.length);
  return true;
}

function finish(): void {
  if (finished) return;
  finished = true;
  clearInterval(keepAlive);
  parentPort?.removeAllListeners('message');
  void client.close().finally(() => {
    answers.close();
    process.exit(0);
  });
}

pump();
