/**
 * Runs `fn` in the check phase of the event loop's next iteration instead of this one's, so that
 * what it sends (the auth fence, the Redis limiter's calls) serves the requests read in two
 * iterations, not one. Under load that is about half the round trips to PostgreSQL and Redis,
 * each of which costs the server tens of µs of CPU (the socket write, waking the other side,
 * reading the answer), for one more iteration of waiting; an idle server's next iteration comes at
 * once (with an immediate pending, the poll phase does not wait).
 *
 * Kept for its figure: BENCHMARKS.md, "Speed tricks", row "two iterations per round trip".
 */
export function inNextCheckPhase(fn: () => void): void {
  setImmediate(() => setImmediate(fn));
}
