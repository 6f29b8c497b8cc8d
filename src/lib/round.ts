/** A figure to two decimals: how every millisecond, Mbps and average in a response is written. */
export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/** A figure to three decimals: the path tools' round-trip times, as ping and traceroute print them. */
export function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
