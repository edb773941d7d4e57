/**
 * One client's StreamAggregatedQuotes stream. Aggregated quotes are encoded once per pair change
 * (and per slippage) and the same bytes go to every stream; each stream only appends its own
 * `sequence` (field 20, varint): protobuf lets a field follow the rest of a message, so
 * body ++ [0xA0 0x01 varint] decodes as the body with sequence set.
 *
 * Backpressure: while write() returns false the stream keeps only the latest body per pair and
 * sends those on 'drain' (a slow client skips intermediate updates, never a pair's latest one).
 */
import type * as grpc from '@grpc/grpc-js';

/** Tag of AggregatedQuote.sequence: field 20, wire type 0 → (20 << 3) | 0 = 160 = varint A0 01. */
const SEQUENCE_TAG = Buffer.from([0xa0, 0x01]);

/** `body` with `sequence` appended as field 20. */
export function frameWithSequence(body: Buffer, sequence: number): Buffer {
  let len = 1;
  for (let v = sequence; v >= 128; v = Math.floor(v / 128)) len++;
  const out = Buffer.allocUnsafe(body.length + SEQUENCE_TAG.length + len);
  body.copy(out, 0);
  let o = body.length;
  out[o++] = SEQUENCE_TAG[0]!;
  out[o++] = SEQUENCE_TAG[1]!;
  let v = sequence;
  while (v >= 128) {
    out[o++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  out[o] = v;
  return out;
}

interface PairProgress {
  sequence: number;
  lastSentAt: number;
}

export class StreamSubscriber {
  /** Pairs of the request, by pairID. */
  readonly pairs = new Map<string, PairProgress>();
  private readonly pending = new Map<string, Buffer>();
  private blocked = false;
  private closed = false;
  /** Bodies written since the stream opened (tests, stats). */
  sent = 0;
  /** Bodies replaced by a newer one while the client was slow. */
  superseded = 0;

  constructor(
    readonly call: grpc.ServerWritableStream<unknown, Buffer>,
    readonly slippageBps: number,
    readonly updateIntervalMs: number,
    pairIds: readonly string[],
  ) {
    for (const id of pairIds) this.pairs.set(id, { sequence: 0, lastSentAt: 0 });
    call.on('drain', () => this.flush());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** When the pair was last written, Unix ms (0: never). */
  lastSentAt(pairId: string): number {
    return this.pairs.get(pairId)?.lastSentAt ?? 0;
  }

  /** Sends the pair's current body now, or as soon as the client drains. */
  send(pairId: string, body: Buffer, now: number): void {
    if (this.closed) return;
    const progress = this.pairs.get(pairId);
    if (progress === undefined) return;
    progress.lastSentAt = now; // counts as sent for the update interval even when queued
    if (this.blocked) {
      if (this.pending.has(pairId)) this.superseded++;
      this.pending.set(pairId, body);
      return;
    }
    this.write(progress, body);
  }

  /** Ends the stream with status OK. Idempotent. */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending.clear();
    try {
      this.call.end();
    } catch {
      // already ended by the transport
    }
  }

  /** The client went away: stop writing. */
  markClosed(): void {
    this.closed = true;
    this.pending.clear();
  }

  private write(progress: PairProgress, body: Buffer): void {
    progress.sequence++;
    this.sent++;
    if (!this.call.write(frameWithSequence(body, progress.sequence))) this.blocked = true;
  }

  private flush(): void {
    this.blocked = false;
    for (const [pairId, body] of this.pending) {
      this.pending.delete(pairId);
      const progress = this.pairs.get(pairId);
      if (progress === undefined || this.closed) continue;
      this.write(progress, body);
      if (this.blocked) return;
    }
  }
}
