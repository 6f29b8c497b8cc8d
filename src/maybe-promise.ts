/**
 * A value now, or a promise of it. The request hot path's collaborators (the token cache, the
 * in-process limiter) answer from memory almost always; giving the value back directly spares
 * each request the promises and microtask turns of an async call. Backends that must wait (Redis,
 * PostgreSQL) return a promise, and callers handle both with `whenReady`.
 */
export type MaybePromise<T> = T | Promise<T>;

export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return value instanceof Promise;
}

/**
 * Calls `next` with the value, at once or when its promise resolves. A rejection, or a throw from
 * `next` after waiting, goes to `fail`; a throw from `next` on the synchronous path propagates to
 * the caller, like any synchronous code. `E` lets a callback that takes only errors (a Fastify
 * hook's `done`) be the failure path; what reaches it is whatever was thrown or rejected.
 */
export function whenReady<T, E = unknown>(value: MaybePromise<T>, next: (value: T) => void, fail: (err: E) => void): void {
  if (!isPromise(value)) {
    next(value);
    return;
  }
  value.then((v) => {
    try {
      next(v);
    } catch (err) {
      fail(err as E);
    }
  }, fail);
}
