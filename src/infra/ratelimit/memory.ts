import { WINDOWS, decide, windowStart, type Decision, type RateLimiter, type WindowLimits, type WindowState } from './limiter.js';

/** Buckets untouched for a whole day are dropped after this many consumes, to bound memory. */
export const MEMORY_SWEEP_EVERY = 10_000;

interface Bucket {
  starts: number[];
  counts: number[];
}

/**
 * In-process limiter: exact under concurrency because JavaScript runs one consume at a time.
 * Counts live in memory, so they restart from zero with the process; REDIS_URL shares and keeps them.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private sinceSweep = 0;

  private current(key: string, now: number): number[] {
    const bucket = this.buckets.get(key);
    if (!bucket) return [0, 0, 0];
    return WINDOWS.map((w, i) => (bucket.starts[i] === windowStart(w, now) ? bucket.counts[i]! : 0));
  }

  async consume(key: string, limits: WindowLimits, now: number): Promise<Decision> {
    if (++this.sinceSweep >= MEMORY_SWEEP_EVERY) this.sweep(now);
    const counts = this.current(key, now);
    const allowed = WINDOWS.every((w, i) => counts[i]! < limits[w]);
    if (allowed) {
      for (let i = 0; i < counts.length; i++) counts[i]! += 1;
      this.buckets.set(key, { starts: WINDOWS.map((w) => windowStart(w, now)), counts });
    }
    return decide(allowed, counts, limits, now);
  }

  async peek(key: string, limits: WindowLimits, now: number): Promise<WindowState[]> {
    return decide(true, this.current(key, now), limits, now).windows;
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
