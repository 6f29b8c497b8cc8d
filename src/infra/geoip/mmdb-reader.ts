import { LRUCache } from 'lru-cache';
import { Reader, type Response } from 'maxmind';
import { cidrOf, toLookupAddress } from './address.js';
import { readMmdbSync } from './mmdb-file.js';

/**
 * What one kind of MaxMind database (City, ASN) brings to MmdbReader: the database types it
 * opens and how a record of the file becomes ours. The rest (opening, the record cache, the
 * IPv4-only bound, the lookup and its network) is the reader's, once for every kind.
 */
export interface MmdbKind<T extends Response, R> {
  /** The database types this kind opens: a City file given as the ASN file (or the reverse) would open fine and answer null forever. */
  readonly accepts: RegExp;
  /** What the refusal of another type says was expected. */
  readonly expected: string;
  /** Our record of the file's `rec`, which covers `network` (CIDR text); null when `rec` cannot fill it. */
  record(rec: T, network: string): R | null;
}

/**
 * Decoded mmdb values kept per reader: mmdb-lib's decoder caches them by data-section offset, as
 * maxmind's own open() sets it up (an LRU of 10,000). Records point to shared parts (a country, a
 * continent, a city), so even random addresses hit it often; a City lookup without it decodes
 * every language's names each time. Measured on random IPv4 against GeoLite2-City: 256 entries
 * 2.5x, 4096 about 4x the uncached rate; much larger caches only add GC work for random traffic.
 * A few MiB.
 */
export const MMDB_CACHE_ENTRIES = 4_096;

function buildDateOf(reader: Reader<Response>): string | null {
  const epoch = reader.metadata.buildEpoch;
  return epoch instanceof Date && !Number.isNaN(epoch.getTime()) ? epoch.toISOString().slice(0, 10) : null;
}

/** An opened .mmdb of one kind (MmdbKind), with the record cache; MmdbCityReader and MmdbAsnReader are its two kinds. */
export class MmdbReader<T extends Response, R> {
  readonly buildDate: string | null;
  readonly databaseType: string;
  readonly #reader: Reader<T>;
  readonly #kind: MmdbKind<T, R>;

  /** `db` is the whole, inflated .mmdb file (see inflateMmdb); a database of another kind is refused. */
  protected constructor(db: Buffer, kind: MmdbKind<T, R>) {
    const reader = new Reader<T>(db, { cache: new LRUCache<string | number, object>({ max: MMDB_CACHE_ENTRIES }) });
    if (!kind.accepts.test(reader.metadata.databaseType)) {
      throw new Error(`database type is ${reader.metadata.databaseType}, expected ${kind.expected}`);
    }
    this.#reader = reader;
    this.#kind = kind;
    this.buildDate = buildDateOf(reader);
    this.databaseType = reader.metadata.databaseType;
  }

  /** `db` is the whole, inflated .mmdb file (see inflateMmdb). */
  static fromBuffer<C>(this: new (db: Buffer) => C, db: Buffer): C {
    return new this(db);
  }

  /** Synchronous read for the lazy path (a lookup before load()). */
  static openSync<C>(this: new (db: Buffer) => C, path: string): C {
    return new this(readMmdbSync(path));
  }

  /** The record that covers `ip`, as this kind makes it; null when the file has none. */
  lookup(ip: string): R | null {
    const address = toLookupAddress(ip);
    // An IPv4-only database walked with IPv6 bits would answer for the wrong address.
    if (!address || (address.version === 6 && this.#reader.metadata.ipVersion === 4)) return null;
    const [rec, prefix] = this.#reader.getWithPrefixLength(address.text);
    return rec ? this.#kind.record(rec, cidrOf(address, prefix)) : null;
  }
}
