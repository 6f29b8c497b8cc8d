/** A figure to two decimals: how every millisecond, Mbps and average in a response is written. */
export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
