/**
 * Waits `ms`, or less: until `signal` aborts or `wake` settles (a send in flight, so its answer is
 * acted on at once). Never rejects; its timer is cleared when it ends early.
 */
export function pause(ms: number, signal?: AbortSignal, wake?: Promise<unknown>): Promise<void> {
  if (signal?.aborted === true) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    wake?.then(done, done);
  });
}
