import { performance } from 'node:perf_hooks';

/**
 * Deadlines of one fixed length, many in flight, most cancelled long before they are due (an
 * upstream attempt answered in a millisecond against a 10 s deadline). Instead of a timer each
 * (a setTimeout and a clearTimeout per attempt: an object and two timer-list operations), they wait
 * in arrival order in an intrusive list, which is also deadline order since the length is fixed:
 * adding and cancelling are a few pointer writes, and one shared timer is armed for the oldest.
 * When it fires, every entry due is expired; the timer is armed again for the oldest left. Entries
 * cancelled in the meantime cost nothing more: the timer only finds a later oldest.
 *
 * The timer is unref'd: an entry does not keep the process alive (its socket does). Node's timers
 * run on the event loop's millisecond clock, up to 1 ms before the performance.now() deadline:
 * entries within that of their deadline are expired rather than waiting for another turn.
 */

/** An entry; its fields belong to the queue that holds it. */
export interface Deadline {
  deadlineAt: number;
  /** Neighbours in the queue; null at the ends or when not queued. */
  prevDeadline: Deadline | null;
  nextDeadline: Deadline | null;
  /** Called once, when the deadline passes while the entry is still queued (it has been removed). */
  expire(): void;
}

const CLOCK_SLACK_MS = 1;

export class DeadlineQueue {
  private head: Deadline | null = null;
  private tail: Deadline | null = null;
  private timer: NodeJS.Timeout | null = null;
  private size = 0;

  constructor(readonly lengthMs: number) {}

  get pending(): number {
    return this.size;
  }

  /** Queues `d`, due lengthMs after `now` (performance.now(), which the caller may have read already). */
  add(d: Deadline, now = performance.now()): void {
    d.deadlineAt = now + this.lengthMs;
    d.nextDeadline = null;
    d.prevDeadline = this.tail;
    if (this.tail === null) this.head = d;
    else this.tail.nextDeadline = d;
    this.tail = d;
    this.size++;
    if (this.timer === null) this.arm(this.lengthMs);
  }

  /** Takes `d` out (answered in time); a no-op when it is not queued. */
  remove(d: Deadline): void {
    const prev = d.prevDeadline;
    const next = d.nextDeadline;
    if (prev === null && this.head !== d) return;
    if (prev === null) this.head = next;
    else prev.nextDeadline = next;
    if (next === null) this.tail = prev;
    else next.prevDeadline = prev;
    d.prevDeadline = null;
    d.nextDeadline = null;
    this.size--;
  }

  /** Stops the timer; queued entries stay queued, never expired. */
  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.onTimer(), Math.max(1, Math.ceil(ms)));
    this.timer.unref();
  }

  private onTimer(): void {
    this.timer = null;
    const now = performance.now() + CLOCK_SLACK_MS;
    let d = this.head;
    while (d !== null && d.deadlineAt <= now) {
      this.remove(d);
      d.expire();
      d = this.head;
    }
    if (d !== null && this.timer === null) this.arm(d.deadlineAt - performance.now());
  }
}
