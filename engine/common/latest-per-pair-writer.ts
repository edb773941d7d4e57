/**
 * Bounded backpressure for a stream of per-pair messages (the local and the external
 * StreamBatchQuotes streams): while the sink's `write` returns false, at most the latest message
 * per pair is held (an older held one is replaced and counted), and the held ones are written
 * when the sink emits 'drain', in the order they were last replaced. A slow client skips
 * intermediate messages of a pair, never a pair's latest one.
 */
import type { Logger } from '../obs/index.js';

/** Where messages go: a Node writable in object mode (a gRPC server call). */
export interface MessageSink<M> {
  write(message: M): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

export interface LatestPerPairWriterOptions<M> {
  sink: MessageSink<M>;
  /** Counts every message the sink accepted. */
  sentCounter: { inc(): void };
  /** Counts every held message replaced by a newer one of its pair. */
  supersededCounter: { inc(): void };
  logger?: Logger | undefined;
  /** Log message of a write the sink threw on. */
  writeFailedMessage: string;
}

export class LatestPerPairWriter<M extends { pairId: string }> {
  private readonly sink: MessageSink<M>;
  private readonly sentCounter: { inc(): void };
  private readonly supersededCounter: { inc(): void };
  private readonly log: Logger | undefined;
  private readonly writeFailedMessage: string;
  /** Messages held while the sink is backpressured, latest per pair. */
  private readonly held = new Map<number, M>();
  private blocked = false;
  private closed = false;
  /** Messages written to the sink. */
  sent = 0;

  constructor(options: LatestPerPairWriterOptions<M>) {
    this.sink = options.sink;
    this.sentCounter = options.sentCounter;
    this.supersededCounter = options.supersededCounter;
    this.log = options.logger;
    this.writeFailedMessage = options.writeFailedMessage;
  }

  /** Whether the sink asked to wait for 'drain' (messages sent now are held). */
  get isBlocked(): boolean {
    return this.blocked;
  }

  /** Writes `message` of pair `pair` now, or holds it (replacing the pair's held one) until 'drain'. */
  send(pair: number, message: M): void {
    if (this.blocked) {
      if (this.held.has(pair)) this.supersededCounter.inc();
      // Re-inserted at the end: held messages go out in the order they were last replaced.
      this.held.delete(pair);
      this.held.set(pair, message);
      return;
    }
    this.write(message);
  }

  /** Drops the held messages; a later 'drain' writes nothing. Idempotent. */
  close(): void {
    this.closed = true;
    this.held.clear();
  }

  private write(m: M): void {
    let ok: boolean;
    try {
      ok = this.sink.write(m);
    } catch (err) {
      // A message the serializer refuses is a bug; the stream goes on with the other pairs.
      this.log?.error({ err, pairId: m.pairId }, this.writeFailedMessage);
      return;
    }
    this.sent++;
    this.sentCounter.inc();
    if (!ok && !this.blocked) {
      this.blocked = true;
      this.sink.once('drain', () => this.drained());
    }
  }

  private drained(): void {
    this.blocked = false;
    if (this.closed) return;
    for (const [pair, m] of this.held) {
      this.held.delete(pair);
      this.write(m);
      if (this.blocked) return;
    }
  }
}
