import { performance } from 'node:perf_hooks';
import { domainToASCII } from 'node:url';
import { normalizeDomain } from '../dns/names.js';
import { askWhoisServer, type WhoisHop } from './client.js';
import { WHOIS_HOP_TIMEOUT_MS, WHOIS_MAX_HOPS, WHOIS_MAX_RESPONSE_BYTES, WHOIS_TOTAL_TIMEOUT_MS } from './defaults.js';
import { entries, parseWhois } from './parser.js';
import { findReferral } from './referral.js';
import { withoutTrailingNewlines } from './text.js';
import type { WhoisDialer, WhoisFields, WhoisResult, WhoisServerAddress } from './types.js';

export interface WhoisServiceOptions<A extends string> {
  dialer: WhoisDialer<A>;
  /** The first server asked (Config.whoisServer; whois.iana.org:43 by default). */
  server: WhoisServerAddress;
  maxHops?: number;
  hopTimeoutMs?: number;
  totalTimeoutMs?: number;
  maxResponseBytes?: number;
}

interface Answered {
  hop: WhoisHop;
  fields: WhoisFields;
  /** The answer describes the domain asked for (not, like IANA's, its TLD). */
  about: boolean;
}

/**
 * WHOIS for a domain: ask the first server (IANA), follow its referral to the TLD's registry,
 * then the registry's referral to the registrar; at most WHOIS_MAX_HOPS servers, none twice.
 * Every connection goes through the dialer (target policy). A server that fails or is silent
 * does not fail the lookup: the result keeps what the others said and names the failure.
 *
 * The query sent everywhere is the normalised name as given (subdomains are not stripped: the
 * registry then answers "not found", which is what it knows about that name).
 */
export class WhoisService<A extends string = string> {
  readonly #dialer: WhoisDialer<A>;
  readonly #server: WhoisServerAddress;
  readonly #maxHops: number;
  readonly #hopTimeoutMs: number;
  readonly #totalTimeoutMs: number;
  readonly #maxBytes: number;

  constructor(opts: WhoisServiceOptions<A>) {
    this.#dialer = opts.dialer;
    this.#server = opts.server;
    this.#maxHops = opts.maxHops ?? WHOIS_MAX_HOPS;
    this.#hopTimeoutMs = opts.hopTimeoutMs ?? WHOIS_HOP_TIMEOUT_MS;
    this.#totalTimeoutMs = opts.totalTimeoutMs ?? WHOIS_TOTAL_TIMEOUT_MS;
    this.#maxBytes = opts.maxResponseBytes ?? WHOIS_MAX_RESPONSE_BYTES;
  }

  /**
   * `signal` ends the lookup early (the client went away, the job was cancelled): the socket of
   * the server being asked is closed at once, no referral is followed, and the call rejects with
   * the signal's reason instead of answering.
   */
  async lookup(input: string, signal?: AbortSignal): Promise<WhoisResult> {
    const domain = normalizeDomain(input, { field: 'domain', allowUnderscore: false, minLabels: 2 });
    signal?.throwIfAborted();
    const started = performance.now();
    // The lookup's own deadline ends the hop in progress as a timeout; the caller's abort ends it too.
    const deadline = AbortSignal.timeout(this.#totalTimeoutMs);
    const stop = signal ? AbortSignal.any([deadline, signal]) : deadline;
    const visited = new Set<string>();
    const answered: Answered[] = [];
    const hops: WhoisHop[] = [];

    let next: WhoisServerAddress | null = this.#server;
    while (next !== null && hops.length < this.#maxHops) {
      const key = `${next.host.toLowerCase()}:${next.port}`;
      // A referral back to a server already asked (or to itself) ends the chain.
      if (visited.has(key)) break;
      visited.add(key);
      const left = this.#totalTimeoutMs - (performance.now() - started);
      if (left <= 0) break;

      const hop = await askWhoisServer(this.#dialer, next, domain, {
        timeoutMs: Math.min(this.#hopTimeoutMs, left),
        maxBytes: this.#maxBytes,
        signal: stop,
      });
      // Once the caller has given up, its reason is the outcome, not a hop that "timed out".
      signal?.throwIfAborted();
      hops.push(hop);
      if (hop.text.trim() === '') break;

      const parsed = entries(hop.text);
      const fields = parseWhois(hop.text, parsed);
      const about = fields.registered === false || (fields.domain !== null && sameDomain(fields.domain, domain));
      answered.push({ hop, fields, about });
      if (about && fields.registered === false) break;
      next = findReferral(parsed);
    }
    return this.#result(domain, hops, answered);
  }

  #result(domain: string, hops: WhoisHop[], answered: Answered[]): WhoisResult {
    const about = answered.filter((a) => a.about);
    const failures = hops.filter((h) => h.status !== 'ok').map((h) => h.error ?? `${h.server}: ${h.status}`);
    let error = failures.length > 0 ? failures.join('; ') : null;
    if (about.length === 0 && error === null) {
      error = answered.length > 0 ? `no WHOIS server found for ${domain}` : 'no WHOIS server answered';
    }

    // The registry (first answer about the domain) is authoritative; later hops (the
    // registrar) fill in what it left out, which is everything for thin registries.
    const pick = <K extends keyof WhoisFields>(k: K): WhoisFields[K] | null => {
      for (const a of about) {
        const v = a.fields[k];
        if (v !== null && !(Array.isArray(v) && v.length === 0)) return v;
      }
      return null;
    };
    const registered = about.some((a) => a.fields.registered === true)
      ? true
      : about.some((a) => a.fields.registered === false)
        ? false
        : null;
    const shown = about.length > 0 ? about : answered.slice(-1);
    return {
      domain,
      registered,
      registrar: registered === false ? null : pick('registrar'),
      registrar_url: registered === false ? null : pick('registrar_url'),
      whois_server: pick('whois_server') ?? about[0]?.hop.server ?? null,
      creation_date: pick('creation_date'),
      updated_date: pick('updated_date'),
      expiration_date: pick('expiration_date'),
      name_servers: pick('name_servers') ?? [],
      status: pick('status') ?? [],
      dnssec: pick('dnssec'),
      raw: shown.map((a) => `% whois server: ${a.hop.server}\n${withoutTrailingNewlines(a.hop.text)}\n`).join('\n'),
      hops: hops.map(({ text: _text, ...report }) => report),
      error,
    };
  }
}

function sameDomain(written: string, asked: string): boolean {
  // Registries may write an IDN as its U-label (DENIC: "Domain: bücher.de").
  return written === asked || domainToASCII(written) === asked;
}

/** The WHOIS service for a Config: IANA (or NETDIAG_WHOIS_SERVER) first, through the given dialer. */
export function createWhoisService<A extends string>(
  config: { whoisServer: WhoisServerAddress },
  dialer: WhoisDialer<A>,
  opts: Omit<WhoisServiceOptions<A>, 'dialer' | 'server'> = {},
): WhoisService<A> {
  return new WhoisService({ ...opts, dialer, server: config.whoisServer });
}
