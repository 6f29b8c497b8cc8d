/** A UTC day in milliseconds (no leap seconds in JavaScript time): days of TTLs, day buckets of usage. */
export const DAY_MS = 86_400_000;
