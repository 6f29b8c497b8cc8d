/** Bound on cached authentication results, on either backend; the cache is simply dropped when full. */
export const AUTH_CACHE_MAX_ENTRIES = 10_000;
