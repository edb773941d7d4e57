/**
 * Time-sliced stream work (issue 11 item 1). A stream of 1,000 pairs quotes and writes 1,000
 * messages when it opens and at every interval: ~10 ms of synchronous work, during which no
 * GET /quote is answered; ten such streams held the loop for 100 ms at a time. The pacer runs the
 * streams' pending work in slices: at most `sliceMs` of it per turn of the event loop, shared by
 * every stream of the server round-robin, then it yields (setImmediate) so that the sockets are
 * polled and waiting requests are answered before the next slice. A request then waits at most
 * one slice behind the streams, however many streams and pairs are open.
 *
 * Work never piles up: a stream keeps at most one pending push per pair (a flag), so a pair that
 * is due again before its last push was made is pushed once. Under load (`LoadSignal.overloaded`)
 * the streams shed their interval pushes (the pacer passes `shed` to each slice); pushes of pairs
 * whose state changed, and the first quotes of a new stream, still go out.
 */
import { performance } from 'node:perf_hooks';

import type { LoadSignal } from '../quote/index.js';

export const DEFAULT_STREAM_SLICE_MS = 0.5;

/** A stream's pending work, run a slice at a time. */
export interface PacedWork {
  /**
   * Does pending work until `deadline` (the pacer's clock, ms) or until none is left; with `shed`
   * it drops the work that may be dropped (interval pushes). Returns true while work remains.
   */
  runSlice(deadline: number, shed: boolean): boolean;
}

export interface StreamPacerOptions {
  /** Stream work per event-loop turn at most, in ms; default 0.5. */
  sliceMs?: number;
  /** When to shed interval pushes; default never. */
  load?: LoadSignal;
  now?: () => number;
}

export class StreamPacer {
  readonly sliceMs: number;
  private readonly load: LoadSignal | undefined;
  private readonly now: () => number;
  /** Streams with pending work, in the order they run next. */
  private readonly queue = new Set<PacedWork>();
  private armed = false;
  /** Turns that ran out of time with work left (a measure of how far the streams are behind). */
  saturatedTurns = 0;

  constructor(options: StreamPacerOptions = {}) {
    this.sliceMs = options.sliceMs ?? DEFAULT_STREAM_SLICE_MS;
    this.load = options.load;
    this.now = options.now ?? performance.now.bind(performance);
  }

  /** Whether optional work should be dropped now. */
  get shedding(): boolean {
    return this.load?.overloaded === true;
  }

  /** `work` has something pending: it runs in a later turn. */
  schedule(work: PacedWork): void {
    this.queue.add(work);
    if (!this.armed) {
      this.armed = true;
      setImmediate(() => this.run());
    }
  }

  /** Forgets `work` (its stream closed). */
  cancel(work: PacedWork): void {
    this.queue.delete(work);
  }

  private run(): void {
    this.armed = false;
    const deadline = this.now() + this.sliceMs;
    const shed = this.shedding;
    for (const work of [...this.queue]) {
      if (!this.queue.delete(work)) continue; // cancelled during this turn
      let more: boolean;
      try {
        more = work.runSlice(deadline, shed);
      } catch {
        // A stream's own failure (its writes are guarded) must not end the others' turns.
        more = false;
      }
      if (more) this.queue.add(work); // to the back: the others go first next turn
      if (this.now() >= deadline) break;
    }
    if (this.queue.size > 0) {
      this.saturatedTurns++;
      this.armed = true;
      setImmediate(() => this.run());
    }
  }
}
