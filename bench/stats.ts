/** Order statistics the benchmark scripts report. */

/** The q-quantile (0–1) of the samples, by nearest rank from below: 0.5 is the median. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) throw new RangeError('quantile of no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export function median(samples: readonly number[]): number {
  return quantile(samples, 0.5);
}
