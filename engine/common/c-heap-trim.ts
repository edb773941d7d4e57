/**
 * A long-running service's C heap trimmed now and then (engine/chain trimCHeap: glibc
 * malloc_trim(0) through the add-on). glibc keeps freed memory for reuse, and a start-up that
 * compiles and decodes a lot (a pool cache filled from RPC or the bus) leaves much of it free:
 * on the quote bench's server, 1,000 pools cached, ~9 of its 19 MB of C heap after the load, all
 * resident. The first trim gives that back (~1 ms); later ones find little and take ~0.1 ms, so
 * every CHEAP_TRIM_INTERVAL_MS costs the event loop next to nothing.
 *
 * The timer is unref'd: it never keeps a process alive.
 */
import { trimCHeap } from '../chain/index.js';

/** How often the C heap is trimmed. */
export const CHEAP_TRIM_INTERVAL_MS = 30_000;

export class CHeapTrim {
  /** Trims run, and those that gave memory back. */
  trims = 0;
  released = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number = CHEAP_TRIM_INTERVAL_MS,
    private readonly trim: () => boolean = trimCHeap,
  ) {}

  /** Trims every `intervalMs` from now on (idempotent). */
  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.runOnce(), this.intervalMs);
    this.timer.unref();
  }

  /** Whether the interval is on (between start and stop). */
  get running(): boolean {
    return this.timer !== undefined;
  }

  /** One trim now. */
  runOnce(): void {
    this.trims++;
    if (this.trim()) this.released++;
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
