import { WINDOWS, decide, windowStart, type Decision, type RateLimiter, type WindowLimits, type WindowSeed, type WindowState } from '../../domain/usage/rate-limit.js';

/** Buckets untouched for a whole day are dropped after this many consumes, to bound memory. */
export const MEMORY_SWEEP_EVERY = 10_000;

interface Bucket {
  starts: number[];
  counts: number[];
}

/**
 * In-process limiter: exact under concurrency because JavaScript runs one consume at a time.
 * Counts live in memory; `seedWindows` lets a restarted process pick every window's count up
 * again from what was recorded, so a restart hands out no fresh minute, hour or day. REDIS_URL
 * shares the counts between instances.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly seeding = new Map<string, Promise<void>>();
  private sinceSweep = 0;

  constructor(private readonly seedWindows?: WindowSeed) {}

  /** Loads a key's counts once; concurrent first requests wait for the same load. */
  private seed(key: string, now: number): Promise<void> | undefined {
    if (!this.seedWindows || this.buckets.has(key)) return undefined;
    let pending = this.seeding.get(key);
    if (!pending) {
      pending = this.seedWindows(key, now).then(
        (seeded) => {
          // Stored even at 0, so the key is not asked about again.
          if (!this.buckets.has(key)) {
            this.buckets.set(key, { starts: WINDOWS.map((w) => windowStart(w, now)), counts: WINDOWS.map((w) => seeded[w]) });
          }
          this.seeding.delete(key);
        },
        (err: unknown) => {
          this.seeding.delete(key);
          throw err;
        },
      );
      this.seeding.set(key, pending);
    }
    return pending;
  }

  private current(key: string, now: number): number[] {
    const bucket = this.buckets.get(key);
    if (!bucket) return [0, 0, 0];
    return WINDOWS.map((w, i) => (bucket.starts[i] === windowStart(w, now) ? bucket.counts[i]! : 0));
  }

  /** A key's first request after a restart waits for its recorded counts. */
  async consume(key: string, limits: WindowLimits, now: number): Promise<Decision> {
    const seeding = this.seed(key, now);
    if (seeding) await seeding;
    return this.count(key, limits, now);
  }

  private count(key: string, limits: WindowLimits, now: number): Decision {
    if (++this.sinceSweep >= MEMORY_SWEEP_EVERY) this.sweep(now);
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { starts: [0, 0, 0], counts: [0, 0, 0] };
      this.buckets.set(key, bucket);
    }
    // The bucket is updated in place: one consume per request, so no garbage per request here.
    const { starts, counts } = bucket;
    for (let i = 0; i < WINDOWS.length; i++) {
      const start = windowStart(WINDOWS[i]!, now);
      if (starts[i] !== start) {
        starts[i] = start;
        counts[i] = 0;
      }
    }
    const allowed = counts[0]! < limits.minute && counts[1]! < limits.hour && counts[2]! < limits.day;
    if (allowed) for (let i = 0; i < counts.length; i++) counts[i]! += 1;
    return decide(allowed, counts, limits, now);
  }

  async peek(key: string, limits: WindowLimits, now: number): Promise<WindowState[]> {
    return decide(true, this.current(key, now), limits, now).windows;
  }

  async refund(key: string, now: number): Promise<void> {
    const bucket = this.buckets.get(key);
    if (!bucket) return;
    for (let i = 0; i < WINDOWS.length; i++) {
      if (bucket.starts[i] === windowStart(WINDOWS[i]!, now) && bucket.counts[i]! > 0) bucket.counts[i]! -= 1;
    }
  }

  private sweep(now: number): void {
    this.sinceSweep = 0;
    const today = windowStart('day', now);
    for (const [key, bucket] of this.buckets) if (bucket.starts[2]! < today) this.buckets.delete(key);
  }

  async close(): Promise<void> {
    this.buckets.clear();
  }
}
