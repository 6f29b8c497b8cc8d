/**
 * A counting semaphore with a FIFO queue. Waiting is the point: a scan that finds the budget
 * spent waits its turn instead of failing, and an aborted request leaves the queue at once.
 */

interface Waiter {
  grant: (release: () => void) => void;
}

export class ConnectionLimiter {
  readonly capacity: number;
  #active = 0;
  readonly #queue: Waiter[] = [];

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`ConnectionLimiter: capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Resolves with a release function (safe to call more than once) when a slot is free.
   * Rejects with `signal.reason` if the signal aborts first; the slot is then never taken.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#active < this.capacity) {
      this.#active++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.#queue.indexOf(waiter);
        if (i >= 0) this.#queue.splice(i, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      this.#queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#queue.shift();
      // The slot passes straight to the next waiter, so a newcomer cannot jump the queue.
      if (next) next.grant(this.#releaser());
      else this.#active--;
    };
  }
}
