import type { UsageDailyTable } from './schema.js';
import type { UsageRecord } from './store.js';

/** Folds a batch into one increment per (account, day, endpoint), so a batch is a few upserts. */
export function aggregateUsage(records: readonly UsageRecord[]): UsageDailyTable[] {
  const byKey = new Map<string, UsageDailyTable>();
  let inc: UsageDailyTable | undefined;
  for (const r of records) {
    // A batch is mostly runs of one client calling one endpoint: the row of the record before
    // usually takes this one too, without building and hashing a key.
    if (!inc || inc.account_id !== r.account_id || inc.day !== r.day || inc.endpoint !== r.endpoint) {
      const key = `${r.account_id}\u0000${r.day}\u0000${r.endpoint}`;
      inc = byKey.get(key);
      if (!inc) {
        inc = { account_id: r.account_id, day: r.day, endpoint: r.endpoint, requests: 0, successful: 0, failed: 0, rate_limited: 0, total_ms: 0 };
        byKey.set(key, inc);
      }
    }
    inc.requests += 1;
    inc[r.outcome] += 1;
    inc.total_ms += r.duration_ms;
  }
  return [...byKey.values()];
}
