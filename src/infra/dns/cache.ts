import { LRUCache } from 'lru-cache';
import { DNS_CACHE_MAX_ENTRIES, DNS_CACHE_MAX_TTL_S, DNS_CACHE_NEGATIVE_MAX_TTL_S } from './defaults.js';
import { withTtl } from './records.js';
import type { DnsAnswer } from '../../domain/dns/client.js';

export interface DnsCacheOptions {
  maxEntries?: number;
  maxTtlS?: number;
  negativeMaxTtlS?: number;
  /** Milliseconds since the epoch; tests hand in a clock they can move. */
  now?: () => number;
}

interface Entry {
  answer: DnsAnswer;
  storedAt: number;
  expiresAt: number;
}

/**
 * A short-lived answer cache keyed by (name, type, servers). Entries live for the answer's TTL
 * (capped), are handed out with their remaining TTLs, and the least recently used go first when
 * the bound is reached. TIMEOUT, SERVFAIL, REFUSED and the like are never stored: a diagnostics
 * tool should ask again rather than repeat a failure.
 */
export class DnsCache {
  readonly #entries: LRUCache<string, Entry>;
  readonly #maxEntries: number;
  readonly #maxTtlS: number;
  readonly #negativeMaxTtlS: number;
  readonly #now: () => number;

  constructor(opts: DnsCacheOptions = {}) {
    this.#maxEntries = opts.maxEntries ?? DNS_CACHE_MAX_ENTRIES;
    this.#maxTtlS = opts.maxTtlS ?? DNS_CACHE_MAX_TTL_S;
    this.#negativeMaxTtlS = opts.negativeMaxTtlS ?? DNS_CACHE_NEGATIVE_MAX_TTL_S;
    this.#now = opts.now ?? Date.now;
    if (!Number.isInteger(this.#maxEntries) || this.#maxEntries < 1) {
      throw new RangeError(`DnsCache maxEntries must be a positive integer, got ${this.#maxEntries}`);
    }
    // Expiry is checked here (get), by the given clock, exactly at `expiresAt`; the LRU keeps the bound.
    this.#entries = new LRUCache({ max: this.#maxEntries });
  }

  get size(): number {
    return this.#entries.size;
  }

  static key(name: string, type: string, servers: string): string {
    return `${name.toLowerCase()}|${type}|${servers}`;
  }

  /** The cached answer with remaining TTLs, or undefined. */
  get(key: string): DnsAnswer | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    const now = this.#now();
    if (now >= entry.expiresAt) {
      this.#entries.delete(key);
      return undefined;
    }
    const elapsedS = Math.floor((now - entry.storedAt) / 1000);
    return {
      ...entry.answer,
      records: entry.answer.records.map((r) => withTtl(r, Math.max(0, r.ttl - elapsedS))),
    };
  }

  /**
   * Stores an answer for `lifetimeS` seconds (see cacheLifetimeS), capped by the positive or
   * negative maximum; a lifetime of 0 stores nothing.
   */
  set(key: string, answer: DnsAnswer, lifetimeS: number): void {
    const ttl = Math.min(lifetimeS, answer.records.length > 0 ? this.#maxTtlS : this.#negativeMaxTtlS);
    if (!(ttl > 0)) return;
    const now = this.#now();
    this.#entries.set(key, { answer, storedAt: now, expiresAt: now + ttl * 1000 });
  }

  clear(): void {
    this.#entries.clear();
  }
}
