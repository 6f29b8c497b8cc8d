import { entryError, settleEntry, type EntryError } from '../bulk-entries.js';
import { mapConcurrent } from '../../lib/map-concurrent.js';
import { TargetForbiddenError, ValidationError } from '../../errors.js';
import type { DnsClient, DnsRecord, DnsRecordType, DnsStatus } from './client.js';
import { DNS_BULK_CONCURRENCY, DNS_BULK_MAX_DOMAINS, DNS_DEFAULT_TYPE, DNS_INPUT_MAX_CHARS } from './defaults.js';
import { parseRecordType, queryName, reverseNetwork } from './names.js';
import type ipaddr from 'ipaddr.js';

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
  /** Only when asked with `dnssec: true`: the AD bit of the resolver's answer (it validated the data). */
  authenticated?: boolean;
}

export interface DnsLookupOptions {
  /** Ask with the DO bit and report the answer's AD bit as `authenticated`. */
  dnssec?: boolean;
}

/** A bulk entry that is not a domain name (docs/api.md, "Bulk calls"): never asked. */
export interface DnsEntryFailure extends EntryError {
  /** The entry as given. */
  domain: string;
  type: DnsRecordType;
}

export type DnsBulkItem = DnsLookupResult | DnsEntryFailure;

/** A bulk slot not answered yet. */
const PENDING = Object.freeze({}) as DnsBulkItem;

/**
 * Which reverse zones may be asked about: the target policy (NETDIAG_ALLOW_TARGETS), which the
 * infra layer's dialer holds. Throws TargetForbiddenError for a blocked address block.
 */
export interface ReversePolicy {
  /** `askedAs`: the name asked, when `name` is where its answer's CNAME chain led. */
  checkReverse(name: string, network: ipaddr.IPv4 | ipaddr.IPv6, bits: number, askedAs?: string): void;
}

export interface DnsLookupDeps {
  client: DnsClient;
  /**
   * Every name under `in-addr.arpa` or `ip6.arpa` (a PTR of an address, or any type of a reverse
   * name, however spelled) is checked against it before it is asked, and so is every name an
   * answer's CNAME chain led to: the operator's resolver answers for private ranges
   * (`10.9.9.9` → `internal.test`), which /ip/lookup never asks about.
   */
  policy: ReversePolicy;
  bulkConcurrency?: number;
}

/**
 * DNS lookups for the API: validates and normalises the input, asks the DNS client, shapes the
 * answer. Knows nothing of HTTP.
 */
export class DnsLookupService {
  readonly #client: DnsClient;
  readonly #policy: ReversePolicy;
  readonly #concurrency: number;

  constructor(deps: DnsLookupDeps) {
    this.#client = deps.client;
    this.#policy = deps.policy;
    this.#concurrency = deps.bulkConcurrency ?? DNS_BULK_CONCURRENCY;
  }

  /**
   * The name a lookup of `input` asks (for PTR, an address's reverse name), or the
   * ValidationError naming `field`, or TargetForbiddenError when it lies in the reverse zone of a
   * blocked address block (whatever the type: a reverse zone's SOA, NS or CNAMEs map the network
   * too).
   * What a call and a job check before anything is asked.
   */
  queryName(input: string, type: DnsRecordType, field = 'domain'): string {
    if (input.length > DNS_INPUT_MAX_CHARS) throw new ValidationError(field, `must be at most ${DNS_INPUT_MAX_CHARS} characters`);
    const name = queryName(input, type, field);
    const block = reverseNetwork(name);
    if (block !== null) this.#policy.checkReverse(name, block.network, block.bits);
    return name;
  }

  async lookup(domain: string, type: string = DNS_DEFAULT_TYPE, opts: DnsLookupOptions = {}): Promise<DnsLookupResult> {
    const rrtype = parseRecordType(type);
    return this.#lookupName(this.queryName(domain, rrtype), rrtype, opts.dnssec === true);
  }

  /**
   * Many names of one type, concurrently; results in input order, one per input. A name given
   * twice (after normalisation) is looked up once and reported at each position. An entry that
   * is not a domain name gets `{domain, type, error, error_code}` (error naming "domains[i]" and
   * the rule) and is never asked; the list itself being wrong (not an array of strings, empty,
   * too long) or the type is a ValidationError.
   */
  async lookupBulk(
    domains: readonly string[],
    type: string = DNS_DEFAULT_TYPE,
    /** Told each input position's answer as it completes (a name given twice: both positions at once). */
    onItem?: (index: number, result: DnsBulkItem) => void,
    opts: DnsLookupOptions = {},
  ): Promise<DnsBulkItem[]> {
    if (!Array.isArray(domains)) throw new ValidationError('domains', 'must be an array of domain names');
    if (domains.length === 0) throw new ValidationError('domains', 'at least 1 entry');
    if (domains.length > DNS_BULK_MAX_DOMAINS) throw new ValidationError('domains', `at most ${DNS_BULK_MAX_DOMAINS} entries`);
    const rrtype = parseRecordType(type);
    domains.forEach((d, i) => {
      if (typeof d !== 'string') throw new ValidationError(`domains[${i}]`, 'must be a string');
    });
    const entries = await Promise.all(domains.map((d, i) => settleEntry(`domains[${i}]`, () => this.queryName(d, rrtype, `domains[${i}]`))));
    const items: DnsBulkItem[] = entries.map((e, i) => ('refused' in e ? { domain: domains[i]!, type: rrtype, ...e.refused } : PENDING));
    items.forEach((item, i) => item !== PENDING && onItem?.(i, item));

    const names = entries.map((e) => ('value' in e ? e.value : null));
    const unique = [...new Set(names.filter((n): n is string => n !== null))];
    await mapConcurrent(unique, this.#concurrency, async (name) => {
      // A name whose answer led into a blocked reverse zone is refused as its entry, not the call.
      const result = await this.#lookupName(name, rrtype, opts.dnssec === true).catch((err: unknown) => {
        if (err instanceof TargetForbiddenError) return err;
        throw err;
      });
      names.forEach((n, i) => {
        if (n !== name) return;
        const item: DnsBulkItem = result instanceof TargetForbiddenError ? { domain: domains[i]!, type: rrtype, ...entryError(result, `domains[${i}]`)! } : result;
        items[i] = item;
        onItem?.(i, item);
      });
    });
    return items;
  }

  async #lookupName(name: string, type: DnsRecordType, dnssec: boolean): Promise<DnsLookupResult> {
    const answer = await this.#client.query(name, type, dnssec ? { dnssec } : {});
    // A public name may lead (CNAME) into a private reverse zone, which the resolver then answers
    // for: asked already, but not shown. Its status would tell too, so the whole answer is refused.
    for (const alias of answer.aliases ?? []) {
      const block = reverseNetwork(alias);
      if (block !== null) this.#policy.checkReverse(alias, block.network, block.bits, name);
    }
    const result: DnsLookupResult = {
      domain: name,
      type,
      status: answer.status,
      records: answer.records,
      resolver: answer.resolver,
      response_time: answer.responseTimeMs,
      cached: answer.cached,
    };
    if (dnssec) result.authenticated = answer.authenticated;
    return result;
  }
}
