/**
 * The two races a caller keeps writing by hand: an operation against a timer, and an operation
 * against an AbortSignal. The losing operation is left to settle on its own (its rejection is
 * handled), and the timer or the listener is gone as soon as either side settles.
 */

/**
 * Settles as `work` does, unless `ms` pass first: then with what `onTimeout()` returns, or
 * rejects with what it throws.
 */
export function withDeadline<T, U = never>(work: Promise<T>, ms: number, onTimeout: () => U): Promise<T | U> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<U>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onTimeout());
      } catch (err) {
        reject(err);
      }
    }, ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** Settles as `work` does, unless `signal` aborts first (or already has): then rejects with `onAbort()`. */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal, onAbort: () => unknown = () => signal.reason): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(onAbort());
  }
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(onAbort());
    signal.addEventListener('abort', abort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(err);
      },
    );
  });
}
