/**
 * When a long-running command stops: on SIGTERM, SIGINT or SIGHUP, or when its parent process goes
 * away (issue 11, item 5). `npm start` runs `sh -c "... && node ..."`: a supervisor that signals
 * npm ends npm (and the shell), and node, re-parented to PID 1 or a subreaper, would keep every
 * port. Watching the parent makes the engine drain and exit whatever process was signalled;
 * package.json's `exec` also lets npm's own signal forwarding reach node directly.
 */

import type { Logger } from '../obs/index.js';

/** How often the parent process id is compared with the one at start. */
export const PARENT_CHECK_INTERVAL_MS = 250;

export type ShutdownReason = NodeJS.Signals | 'parent-exited';

export interface WaitForShutdownOptions {
  /** Resolve with 'parent-exited' when the parent process changes (default true). */
  watchParent?: boolean;
  intervalMs?: number;
  /** Stop watching at its abort (the promise then never resolves). */
  signal?: AbortSignal;
}

/** Resolves with the reason on the first SIGTERM, SIGINT or SIGHUP, or when the parent process exits. */
export function waitForShutdown(options: WaitForShutdownOptions = {}): Promise<ShutdownReason> {
  return new Promise((resolve) => {
    const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
    const parent = process.ppid;
    let timer: NodeJS.Timeout | undefined;
    const done = (reason: ShutdownReason): void => {
      for (const s of signals) process.off(s, done);
      if (timer !== undefined) clearInterval(timer);
      resolve(reason);
    };
    for (const s of signals) process.on(s, done);
    options.signal?.addEventListener('abort', () => {
      for (const s of signals) process.off(s, done);
      if (timer !== undefined) clearInterval(timer);
    }, { once: true });
    // A parent of 1 at start is a supervisor (or init) that started us directly: nothing to watch.
    if ((options.watchParent ?? true) && parent > 1) {
      timer = setInterval(() => {
        if (process.ppid !== parent) done('parent-exited');
      }, options.intervalMs ?? PARENT_CHECK_INTERVAL_MS);
      timer.unref();
    }
  });
}

/**
 * Waits for `signal` (default: the next shutdown reason), then closes the service and logs both
 * ends; resolves with exit code 0. What every long-running command ends with.
 */
export async function closeOnShutdown(logger: Logger, what: string, close: () => Promise<void>, signal: Promise<ShutdownReason> = waitForShutdown()): Promise<number> {
  const reason = await signal;
  logger.info({ signal: reason }, `${what} stopping`);
  await close();
  logger.info(`${what} stopped`);
  logger.flush();
  return 0;
}
