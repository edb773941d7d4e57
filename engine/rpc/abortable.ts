import { setMaxListeners } from 'node:events';

/**
 * `promise`, or the signal's reason as soon as `signal` aborts, whichever comes first. The
 * promise itself is not stopped (a batched read shared with other callers must go on); the caller
 * stops waiting, and stops doing further work, at the abort. `onAbort` runs after the rejection
 * at an abort while waiting (a shared request's owner decides there whether to stop it).
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, onAborted?: () => void): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      reject(signal.reason as Error);
      onAborted?.();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err as Error);
      },
    );
  });
}

/**
 * An AbortController whose signal any number of waits may listen to at once (a close that stops
 * every read of a round, every start wait of a service): Node's warning past ten listeners is off.
 */
export function sharedAbortController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
