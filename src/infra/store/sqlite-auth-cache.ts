import type Database from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from './schema.js';
import { AUTH_CACHE_MAX_ENTRIES } from './auth-cache.js';
import type { AuthCache, Authenticated } from './auth-cache.js';

/**
 * Authentication results cached in memory on SQLite. Another process (the CLI revoking a token
 * or suspending an account) commits through its own connection, which bumps SQLite's
 * data_version. It is read once per iteration of the event loop: every request handled in one was
 * received before that read, so a revocation that completed before a request was sent is always
 * seen by it. This process's own writes drop the cache when they complete (see write).
 */
export class DataVersionCache implements AuthCache {
  private readonly entries = new LRUCache<string, Authenticated>({ max: AUTH_CACHE_MAX_ENTRIES });
  /** Bumped by every drop: a lookup that spans one does not fill the cache. */
  private generation = 0;
  private readonly dataVersion: Database.Statement;
  private seenVersion: number;
  private checkedThisIteration = false;

  constructor(sqlite: Database.Database) {
    this.dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
    this.seenVersion = this.dataVersion.get() as number;
  }

  // Synchronous on a hit: better-sqlite3 is, and a cached token is the common case.
  async find(key: string, load: () => Promise<Authenticated | undefined>): Promise<Authenticated | undefined> {
    this.checkVersion();
    const hit = this.entries.get(key);
    if (hit !== undefined) return hit;
    const generation = this.generation;
    return load().then((value) => {
      // Unknown keys are not cached: guessing must not grow memory.
      if (value !== undefined && generation === this.generation) {
        this.entries.set(key, value);
      }
      return value;
    });
  }

  async write<T>(db: Kysely<DatabaseSchema>, work: (q: Kysely<DatabaseSchema>) => Promise<T>): Promise<T> {
    try {
      return await work(db);
    } finally {
      this.drop();
    }
  }

  private drop(): void {
    this.generation++;
    this.entries.clear();
  }

  private checkVersion(): void {
    if (this.checkedThisIteration) return;
    this.checkedThisIteration = true;
    setImmediate(() => (this.checkedThisIteration = false));
    const version = this.dataVersion.get() as number;
    if (version !== this.seenVersion) {
      this.seenVersion = version;
      this.drop();
    }
  }
}
