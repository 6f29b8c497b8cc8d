import { LRUCache } from 'lru-cache';

/**
 * A reporter that passes on one error per message per `repeatMs`: while a dependency is away
 * (the database, Redis) a poll or a reconnect fails every second, and the log should say so once
 * in a while, not every second. Bounded: at most REPEAT_FILTER_MAX_MESSAGES remembered, the least
 * recently seen forgotten first.
 */
export const REPEAT_FILTER_MAX_MESSAGES = 100;

export function withoutRepeats(report: (err: unknown) => void, repeatMs: number, now: () => number = Date.now): (err: unknown) => void {
  const lastSeen = new LRUCache<string, number>({ max: REPEAT_FILTER_MAX_MESSAGES });
  return (err) => {
    const key = err instanceof Error ? err.message : String(err);
    const at = now();
    if ((lastSeen.get(key) ?? -Infinity) > at - repeatMs) return;
    lastSeen.set(key, at);
    report(err);
  };
}
