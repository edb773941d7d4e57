/**
 * The one timer of a stream that pushes each of its pairs at least every interval: it is armed for
 * the earliest due time (monotonic ms) and only ever moved earlier; when it fires it is disarmed
 * and the owner looks at its pairs and arms it again.
 */
export class DueTimer {
  private timer: NodeJS.Timeout | undefined;
  private at = Infinity;

  constructor(
    private readonly clock: () => number,
    private readonly onDue: () => void,
  ) {}

  /** Makes the timer fire by `dueAt`; a time at or after the armed one changes nothing. */
  arm(dueAt: number): void {
    if (dueAt >= this.at) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.at = dueAt;
    // Rounded up: a timer that fires a fraction early would find nothing due and re-arm.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.at = Infinity;
      this.onDue();
    }, Math.max(0, Math.ceil(dueAt - this.clock())));
  }

  /** Disarms. Idempotent. */
  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.at = Infinity;
  }
}
