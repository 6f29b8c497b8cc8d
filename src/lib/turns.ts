/**
 * Runs `fn` in the check phase of the event loop's next turn instead of this one's, so that what
 * it sends (the auth fence, the Redis limiter's calls) serves the requests read in two turns, not
 * one. Under load that is about half the round trips to PostgreSQL and Redis, each of which costs
 * the server tens of µs of CPU (the socket write, waking the other side, reading the answer), for
 * one more turn of waiting; an idle server's next turn comes at once (with an immediate pending,
 * the poll phase does not wait).
 *
 * Kept for its figure (issue 25, bench/scale-out.ts, BENCH_ROUNDS=3, a loaded machine): without it and
 * the limiter's batching the PostgreSQL + Redis server took 79.4 µs of CPU per request, with them 67.3.
 */
export function inNextCheckPhase(fn: () => void): void {
  setImmediate(() => setImmediate(fn));
}
