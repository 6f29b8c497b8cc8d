/** A UTC day in milliseconds (no leap seconds in JavaScript time): days of TTLs, day buckets of usage. */
export const DAY_MS = 86_400_000;

/** A timestamp as the pages show it: `2026-11-23 06:16 UTC` (or the date alone), the same for every viewer. */
export function pageTime(iso: string | null, dateOnly = false): string {
  if (iso === null) return '';
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return '';
  const s = new Date(t).toISOString();
  return dateOnly ? s.slice(0, 10) : `${s.slice(0, 10)} ${s.slice(11, 16)} UTC`;
}
