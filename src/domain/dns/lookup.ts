import { mapConcurrent } from '../concurrency.js';
import { ValidationError } from '../../errors.js';
import type { DnsClient, DnsRecord, DnsRecordType, DnsStatus } from '../../infra/dns/types.js';
import { DNS_BULK_CONCURRENCY, DNS_BULK_MAX_DOMAINS, DNS_DEFAULT_TYPE } from './defaults.js';
import { parseRecordType, queryName } from './names.js';

/** One lookup as the API reports it. */
export interface DnsLookupResult {
  /** The name queried: ASCII (punycode), lowercase, no trailing dot; for PTR of an IP its reverse name. */
  domain: string;
  type: DnsRecordType;
  status: DnsStatus;
  /** Answer records of the asked type, each with `type` and `ttl` plus its own fields. */
  records: DnsRecord[];
  resolver: string;
  /** Milliseconds, two decimals at most. */
  response_time: number;
  /** True when the answer came from the cache (TTLs are then the remaining ones). */
  cached: boolean;
}

export interface DnsLookupDeps {
  client: DnsClient;
  bulkConcurrency?: number;
}

/**
 * DNS lookups for the API: validates and normalises the input, asks the DNS client, shapes the
 * answer. Knows nothing of HTTP.
 */
export class DnsLookupService {
  readonly #client: DnsClient;
  readonly #concurrency: number;

  constructor(deps: DnsLookupDeps) {
    this.#client = deps.client;
    this.#concurrency = deps.bulkConcurrency ?? DNS_BULK_CONCURRENCY;
  }

  async lookup(domain: string, type: string = DNS_DEFAULT_TYPE): Promise<DnsLookupResult> {
    const rrtype = parseRecordType(type);
    return this.#lookupName(queryName(domain, rrtype, 'domain'), rrtype);
  }

  /**
   * Many names of one type, concurrently; results in input order, one per input. A name given
   * twice (after normalisation) is looked up once and reported at each position. Any invalid
   * entry makes the whole request invalid (ValidationError naming "domains[i]"), so a client
   * never has to match partial results to its input.
   */
  async lookupBulk(
    domains: readonly string[],
    type: string = DNS_DEFAULT_TYPE,
    /** Told each input position's answer as it completes (a name given twice: both positions at once). */
    onItem?: (index: number, result: DnsLookupResult) => void,
  ): Promise<DnsLookupResult[]> {
    if (!Array.isArray(domains)) throw new ValidationError('domains', 'must be an array of domain names');
    if (domains.length === 0) throw new ValidationError('domains', 'at least 1 entry');
    if (domains.length > DNS_BULK_MAX_DOMAINS) throw new ValidationError('domains', `at most ${DNS_BULK_MAX_DOMAINS} entries`);
    const rrtype = parseRecordType(type);
    const names = domains.map((d, i) => {
      if (typeof d !== 'string') throw new ValidationError(`domains[${i}]`, 'must be a string');
      return queryName(d, rrtype, `domains[${i}]`);
    });

    const unique = [...new Set(names)];
    const lookupOne = (name: string): Promise<DnsLookupResult> => this.#lookupName(name, rrtype);
    const answers = await mapConcurrent(
      unique,
      this.#concurrency,
      onItem
        ? (name) =>
            lookupOne(name).then((r) => {
              names.forEach((n, i) => n === name && onItem(i, r));
              return r;
            })
        : lookupOne,
    );
    const byName = new Map(unique.map((name, i) => [name, answers[i]!]));
    return names.map((name) => byName.get(name)!);
  }

  async #lookupName(name: string, type: DnsRecordType): Promise<DnsLookupResult> {
    const answer = await this.#client.query(name, type);
    return {
      domain: name,
      type,
      status: answer.status,
      records: answer.records,
      resolver: answer.resolver,
      response_time: answer.responseTimeMs,
      cached: answer.cached,
    };
  }
}
