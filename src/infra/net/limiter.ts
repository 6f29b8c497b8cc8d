/**
 * A counting semaphore shared fairly between owners (accounts). Waiting is the point: a scan
 * that finds the budget spent waits its turn instead of failing, and an aborted request leaves
 * the queue at once.
 *
 * Fair, not first come first served: a freed slot goes to the waiting owner that holds the
 * fewest slots (ties: the one waiting longest), so an account waiting for its first connect is
 * served before another account's thousandth. And no owner may hold more than `maxPerOwner`
 * slots, so one account alone never fills the budget: a newcomer finds a free slot at once
 * instead of waiting for someone's connect to time out. Without owners (a per-request limiter)
 * it is a plain FIFO queue.
 */

interface Waiter {
  grant: (release: () => void) => void;
}

/** The owner of acquisitions that name none. */
const NO_OWNER = '';

export interface ConnectionLimiterOptions {
  /** Slots one owner may hold at once; default: all of them. */
  maxPerOwner?: number;
}

export class ConnectionLimiter {
  readonly capacity: number;
  readonly maxPerOwner: number;
  #active = 0;
  #waiting = 0;
  /** Waiters by owner; Map order is the order owners started waiting (the tie-break). */
  readonly #queues = new Map<string, Waiter[]>();
  /** Slots held by each owner that holds any. */
  readonly #held = new Map<string, number>();

  constructor(capacity: number, opts: ConnectionLimiterOptions = {}) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`ConnectionLimiter: capacity must be a positive integer, got ${capacity}`);
    }
    const maxPerOwner = opts.maxPerOwner ?? capacity;
    if (!Number.isInteger(maxPerOwner) || maxPerOwner < 1) {
      throw new RangeError(`ConnectionLimiter: maxPerOwner must be a positive integer, got ${maxPerOwner}`);
    }
    this.capacity = capacity;
    this.maxPerOwner = Math.min(maxPerOwner, capacity);
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiting;
  }

  /** Slots `owner` holds now. */
  heldBy(owner: string): number {
    return this.#held.get(owner) ?? 0;
  }

  /**
   * Resolves with a release function (safe to call more than once) when a slot is free for
   * `owner`. Rejects with `signal.reason` if the signal aborts first; the slot is then never taken.
   */
  acquire(signal?: AbortSignal, owner: string = NO_OWNER): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    // Free slots while others wait happen only when those others are at their own cap.
    if (this.#active < this.capacity && this.heldBy(owner) < this.maxPerOwner && !this.#queues.has(owner)) {
      this.#take(owner);
      return Promise.resolve(this.#releaser(owner));
    }
    return new Promise((resolve, reject) => {
      let queue = this.#queues.get(owner);
      if (!queue) {
        queue = [];
        this.#queues.set(owner, queue);
      }
      const onAbort = (): void => {
        const q = this.#queues.get(owner);
        const i = q ? q.indexOf(waiter) : -1;
        if (i >= 0) {
          q!.splice(i, 1);
          this.#waiting--;
          if (q!.length === 0) this.#queues.delete(owner);
        }
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      queue.push(waiter);
      this.#waiting++;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #take(owner: string): void {
    this.#active++;
    this.#held.set(owner, this.heldBy(owner) + 1);
  }

  #give(owner: string): void {
    this.#active--;
    const held = this.heldBy(owner) - 1;
    if (held > 0) this.#held.set(owner, held);
    else this.#held.delete(owner);
  }

  /** The waiting owner to serve next: the fewest held, below its cap; null when none may take one. */
  #next(): string | null {
    let best: string | null = null;
    let bestHeld = Infinity;
    for (const owner of this.#queues.keys()) {
      const held = this.heldBy(owner);
      if (held < bestHeld && held < this.maxPerOwner) {
        best = owner;
        bestHeld = held;
        if (held === 0) break;
      }
    }
    return best;
  }

  #releaser(owner: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#give(owner);
      // The slot passes straight to the chosen waiter, so a newcomer cannot jump the queue.
      const next = this.#next();
      if (next === null) return;
      const queue = this.#queues.get(next)!;
      const waiter = queue.shift()!;
      this.#waiting--;
      if (queue.length === 0) this.#queues.delete(next);
      this.#take(next);
      waiter.grant(this.#releaser(next));
    };
  }
}
