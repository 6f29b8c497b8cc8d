import type { Kysely } from 'kysely';
import type { Account, Token } from '../../domain/accounts/repositories.js';
import type { DatabaseSchema } from './schema.js';

/** Bound on cached authentication results, on either backend; past it the least recently used goes. */
export const AUTH_CACHE_MAX_ENTRIES = 10_000;

/** What authentication caches: a token and its account, by the token's hash. */
export type Authenticated = { token: Token; account: Account };

/**
 * The authentication cache of a backend, which the token and account repositories go through:
 * each backend keeps it fresh its own way (SQLite: data_version; PostgreSQL: LISTEN/NOTIFY).
 * Kept for its figure: BENCHMARKS.md, "Speed tricks", row "authentication cache".
 */
export interface AuthCache {
  /** The cached value for `key`, or `load`'s (cached when nothing changed meanwhile); unknown keys are never cached. */
  find(key: string, load: () => Promise<Authenticated | undefined>): Promise<Authenticated | undefined>;
  /**
   * Runs `work`, a write that may change what is cached (a revocation, an account's plan or
   * status), so that no instance answers from a cache that predates it once it resolves.
   */
  write<T>(db: Kysely<DatabaseSchema>, work: (q: Kysely<DatabaseSchema>) => Promise<T>): Promise<T>;
}
