import { normalizeDomain } from '../dns/names.js';
import type { WhoisResult } from '../whois/types.js';
import type { RdapService } from './service.js';

/** /dns/whois's `data`: the WHOIS fields, where they came from, and what RDAP adds. */
export interface RegistrationResult extends WhoisResult {
  source: 'rdap' | 'whois';
  /** The registry's RDAP base URL asked, or null when the answer is port-43 WHOIS. */
  rdap_server: string | null;
  registrant: string | null;
  abuse_email: string | null;
}

export interface RegistrationLookupOptions {
  rdap: RdapService;
  /** Port-43 WHOIS (IANA, then referrals), for TLDs with no RDAP service. */
  whois: { lookup(domain: string, signal?: AbortSignal): Promise<WhoisResult> };
}

/**
 * A domain's registration (docs/dns-whois.md): RDAP first (bootstrap, registry, then
 * the registrar the registry links to), port-43 WHOIS only for a TLD the bootstrap registry gives
 * no RDAP service. An RDAP server that fails is reported as such (source "rdap", `error`), not
 * papered over with another protocol's answer.
 */
export class RegistrationLookup {
  readonly #rdap: RdapService;
  readonly #whois: RegistrationLookupOptions['whois'];

  constructor(opts: RegistrationLookupOptions) {
    this.#rdap = opts.rdap;
    this.#whois = opts.whois;
  }

  async lookup(input: string, signal?: AbortSignal): Promise<RegistrationResult> {
    const domain = normalizeDomain(input, { field: 'domain', allowUnderscore: false, minLabels: 2 });
    signal?.throwIfAborted();
    const rdap = await this.#rdap.domain(domain, signal);
    if (rdap !== null) return { ...rdap, source: 'rdap' };
    const whois = await this.#whois.lookup(domain, signal);
    return { ...whois, source: 'whois', rdap_server: null, registrant: null, abuse_email: null };
  }
}
