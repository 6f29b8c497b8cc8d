/**
 * A counting semaphore shared fairly between owners (accounts). Waiting is the point: a scan
 * that finds the budget spent waits its turn instead of failing, and an aborted request leaves
 * the queue at once.
 *
 * Fair, not first come first served: a freed slot goes to the waiting owner that holds the
 * fewest slots (ties: the one waiting longest), so an account waiting for its first connect is
 * served before another account's thousandth. No owner may hold more than `maxPerOwner` slots.
 *
 * And the slots beyond `maxPerOwner` are a reserve, so that no number of busy owners makes a
 * newcomer wait for one of their connects to time out: while `maxPerOwner` or more slots are
 * held in all, a slot goes only to an owner holding fewer than `reservedBelow`. So however many
 * owners flood, together they leave the `capacity - maxPerOwner` reserved slots free (once each
 * holds its few: an owner arriving with none is a newcomer too, until its first connects end),
 * and an owner with nothing in flight is granted at once unless `reserve / reservedBelow` other
 * owners are each in their first few slots at that moment (and then it is first in line,
 * holding the fewest). A light owner whose connects answer quickly keeps cycling through the
 * reserve. Without owners and caps (a per-request budget) it is a plain FIFO queue.
 */

interface Waiter {
  grant: (release: () => void) => void;
}

/** The owner of acquisitions that name none. */
const NO_OWNER = '';

export interface SocketBudgetOptions {
  /** Slots one owner may hold at once; default: all of them. */
  maxPerOwner?: number;
  /**
   * An owner holding fewer slots than this may take one of the reserve (the slots beyond
   * `maxPerOwner`); default `maxPerOwner`, which makes the reserve anyone's below their cap.
   */
  reservedBelow?: number;
}

export class SocketBudget {
  readonly capacity: number;
  readonly maxPerOwner: number;
  /** The slots beyond `maxPerOwner`: only an owner holding fewer than `reservedBelow` takes them. */
  readonly reserve: number;
  readonly reservedBelow: number;
  #active = 0;
  #waiting = 0;
  /** Waiters by owner; Map order is the order owners started waiting (the tie-break). */
  readonly #queues = new Map<string, Waiter[]>();
  /** Slots held by each owner that holds any. */
  readonly #held = new Map<string, number>();

  constructor(capacity: number, opts: SocketBudgetOptions = {}) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`SocketBudget: capacity must be a positive integer, got ${capacity}`);
    }
    const maxPerOwner = opts.maxPerOwner ?? capacity;
    if (!Number.isInteger(maxPerOwner) || maxPerOwner < 1) {
      throw new RangeError(`SocketBudget: maxPerOwner must be a positive integer, got ${maxPerOwner}`);
    }
    const reservedBelow = opts.reservedBelow ?? maxPerOwner;
    if (!Number.isInteger(reservedBelow) || reservedBelow < 1) {
      throw new RangeError(`SocketBudget: reservedBelow must be a positive integer, got ${reservedBelow}`);
    }
    this.capacity = capacity;
    this.maxPerOwner = Math.min(maxPerOwner, capacity);
    this.reserve = capacity - this.maxPerOwner;
    this.reservedBelow = Math.min(reservedBelow, this.maxPerOwner);
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
    const now = this.tryAcquire(owner);
    if (now) return Promise.resolve(now);
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

  /** acquire's slot when one is free for `owner` now, without waiting; else null (nothing taken). */
  tryAcquire(owner: string = NO_OWNER): (() => void) | null {
    // Free slots while others wait happen only when those others may not take them (their cap,
    // or the reserve).
    if (this.heldBy(owner) >= this.#cap() || this.#queues.has(owner)) return null;
    this.#take(owner);
    return this.#releaser(owner);
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

  /**
   * How many slots an owner may already hold and still take one now: `maxPerOwner` below the
   * reserve, `reservedBelow` within it, 0 when all are held.
   */
  #cap(): number {
    if (this.#active >= this.capacity) return 0;
    return this.#active < this.maxPerOwner ? this.maxPerOwner : this.reservedBelow;
  }

  /** The waiting owner to serve next: the fewest held, below the cap; null when none may take one. */
  #next(): string | null {
    const cap = this.#cap();
    let best: string | null = null;
    let bestHeld = Infinity;
    for (const owner of this.#queues.keys()) {
      const held = this.heldBy(owner);
      if (held < bestHeld && held < cap) {
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
