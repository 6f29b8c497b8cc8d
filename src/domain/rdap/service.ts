import type ipaddr from 'ipaddr.js';
import { performance } from 'node:perf_hooks';
import { TargetForbiddenError, ValidationError } from '../../errors.js';
import { round2 } from '../../lib/round.js';
import { urlsForAddress, urlsForAsn, urlsForDomain, type BootstrapRegistry } from './bootstrap.js';
import {
  RDAP_ACCEPT,
  RDAP_MAX_RAW_CHARS,
  RDAP_MAX_REDIRECTS,
  RDAP_MAX_RESPONSE_BYTES,
  RDAP_REQUEST_TIMEOUT_MS,
  RDAP_TOTAL_TIMEOUT_MS,
} from './defaults.js';
import { inlineDecoder, type AnswerKind, type DecodedAnswer, type RdapDecoder } from './decode.js';
import type { DomainFields, NetworkFields } from './objects.js';
import type { RdapHopReport, RdapHttp } from './types.js';

export interface RdapServiceOptions {
  http: RdapHttp;
  bootstrap: BootstrapRegistry;
  /** Where answers are parsed; in line unless given (the infra layer's: a worker thread). */
  decoder?: RdapDecoder;
  requestTimeoutMs?: number;
  totalTimeoutMs?: number;
  maxResponseBytes?: number;
  maxRedirects?: number;
}

/** An answer that arrived whole (after any redirects). */
interface Answer {
  url: string;
  status: number;
  /** The answer's text, cut at RDAP_MAX_RAW_CHARS. */
  raw: string;
  /** A 2xx answer that parsed as a JSON object, read; null otherwise. */
  decoded: DecodedAnswer | null;
}

interface Fetched {
  answer: Answer | null;
  /** Why there is no usable answer (or what went wrong on the way), or null. */
  error: string | null;
}

/** The RDAP part of a domain's registration; `registered` false when the registry answered 404. */
export interface RdapDomainResult extends Omit<DomainFields, 'domain' | 'related'> {
  domain: string;
  registered: boolean | null;
  rdap_server: string;
  raw: string;
  hops: RdapHopReport[];
  error: string | null;
}

export interface RdapNetworkResult extends NetworkFields {
  /** The address (canonical) or "AS15169". */
  query: string;
  source: 'rdap';
  /** The RIR's RDAP base URL from the bootstrap registry, or null when none serves the query. */
  rdap_server: string | null;
  raw: string;
  hops: RdapHopReport[];
  error: string | null;
}

const EMPTY_NETWORK: NetworkFields = {
  handle: null,
  name: null,
  type: null,
  country: null,
  start_address: null,
  end_address: null,
  cidr: [],
  asn_range: null,
  registrant: null,
  abuse_email: null,
  created: null,
  updated: null,
};

function reasonOf(err: unknown): string {
  if (err instanceof TargetForbiddenError) return `refused by the target policy (${err.message})`;
  if (err instanceof ValidationError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * RDAP (RFC 9083) over the bootstrap registry (RFC 9224): which server to ask comes from the
 * bootstrap files, the answer is bounded (RDAP_MAX_RESPONSE_BYTES), depth-checked before it is
 * parsed, and read without trusting its shape. Every request goes through `http`, whose
 * connections are the dialer's: each redirect hop (at most RDAP_MAX_REDIRECTS) and the
 * registrar's server are resolved and checked by the target policy like the first. A server that
 * fails, stalls, floods or redirects somewhere forbidden does not fail the lookup: the result says
 * so in `error` and `hops`.
 */
export class RdapService {
  readonly #http: RdapHttp;
  readonly #decoder: RdapDecoder;
  readonly bootstrap: BootstrapRegistry;
  readonly #requestTimeoutMs: number;
  readonly #totalTimeoutMs: number;
  readonly #maxBytes: number;
  readonly #maxRedirects: number;

  constructor(opts: RdapServiceOptions) {
    this.#http = opts.http;
    this.#decoder = opts.decoder ?? inlineDecoder;
    this.bootstrap = opts.bootstrap;
    this.#requestTimeoutMs = opts.requestTimeoutMs ?? RDAP_REQUEST_TIMEOUT_MS;
    this.#totalTimeoutMs = opts.totalTimeoutMs ?? RDAP_TOTAL_TIMEOUT_MS;
    this.#maxBytes = opts.maxResponseBytes ?? RDAP_MAX_RESPONSE_BYTES;
    this.#maxRedirects = opts.maxRedirects ?? RDAP_MAX_REDIRECTS;
  }

  /** Shutdown: the decoder's thread, if it has one, ends (answers being decoded fail). */
  async close(): Promise<void> {
    await this.#decoder.close?.();
  }

  /** The registry's RDAP base URL for a domain (normalised), or null when its TLD has no RDAP service. */
  async serverFor(domain: string, signal?: AbortSignal): Promise<string | null> {
    const urls = urlsForDomain(await this.bootstrap.file('dns', signal), domain);
    return urls?.[0] ?? null;
  }

  /**
   * A domain (normalised: ASCII, lowercase) at its registry's RDAP server, then at the
   * registrar's when the registry links to it ("related"); null when its TLD has no RDAP service.
   */
  async domain(domain: string, signal?: AbortSignal): Promise<RdapDomainResult | null> {
    const base = await this.serverFor(domain, signal);
    if (base === null) return null;
    const run = this.#run(signal);
    const hops: RdapHopReport[] = [];
    const registry = await this.#get(new URL(`domain/${domain}`, base), 'domain', run, hops);
    const result: RdapDomainResult = {
      domain,
      registered: null,
      registrar: null,
      registrar_url: null,
      whois_server: null,
      creation_date: null,
      updated_date: null,
      expiration_date: null,
      name_servers: [],
      status: [],
      dnssec: null,
      registrant: null,
      abuse_email: null,
      rdap_server: base,
      raw: registry.answer?.raw ?? '',
      hops,
      error: registry.error,
    };
    const answer = registry.answer;
    if (answer === null) return result;
    if (answer.status === 404) return { ...result, registered: false };
    if (answer.decoded?.domain == null) return { ...result, error: registry.error ?? `${answer.url}: HTTP ${answer.status}, no RDAP domain object` };

    const fields = answer.decoded.domain;
    const errors: string[] = [];
    let registrar: DomainFields | null = null;
    if (fields.related !== null && fields.related !== answer.url) {
      // The registrar's server: a stranger's too, resolved and checked like the registry's.
      const more = await this.#get(new URL(fields.related), 'domain', run, hops);
      if (more.answer?.decoded?.domain) registrar = more.answer.decoded.domain;
      else errors.push(more.error ?? `${fields.related}: HTTP ${more.answer?.status ?? '?'}`);
    }
    // The registry is authoritative; the registrar fills what it left out (everything, for thin registries).
    const pick = <K extends keyof DomainFields>(k: K): DomainFields[K] => {
      const v = fields[k];
      const empty = v === null || (Array.isArray(v) && v.length === 0);
      return empty && registrar !== null ? registrar[k] : v;
    };
    return {
      ...result,
      registered: true,
      registrar: pick('registrar'),
      registrar_url: pick('registrar_url'),
      // The registrar's port-43 server is the one WHOIS users look for; the registry's otherwise.
      whois_server: registrar?.whois_server ?? fields.whois_server,
      creation_date: pick('creation_date'),
      updated_date: pick('updated_date'),
      expiration_date: pick('expiration_date'),
      name_servers: pick('name_servers'),
      status: pick('status'),
      dnssec: pick('dnssec'),
      registrant: pick('registrant'),
      abuse_email: pick('abuse_email'),
      error: errors.length > 0 ? errors.join('; ') : null,
    };
  }

  /** The network an address belongs to, from its RIR's RDAP service. */
  async ip(address: ipaddr.IPv4 | ipaddr.IPv6, signal?: AbortSignal): Promise<RdapNetworkResult> {
    const query = address.toString();
    const file = await this.bootstrap.file(address.kind() === 'ipv4' ? 'ipv4' : 'ipv6', signal);
    return this.#network(query, urlsForAddress(file, address)?.[0] ?? null, `ip/${query}`, 'ip network', signal);
  }

  /** An autonomous system, from its RIR's RDAP service. */
  async asn(asn: number, signal?: AbortSignal): Promise<RdapNetworkResult> {
    const file = await this.bootstrap.file('asn', signal);
    return this.#network(`AS${asn}`, urlsForAsn(file, asn)?.[0] ?? null, `autnum/${asn}`, 'autnum', signal);
  }

  async #network(query: string, base: string | null, path: string, objectClass: string, signal: AbortSignal | undefined): Promise<RdapNetworkResult> {
    const result: RdapNetworkResult = { query, source: 'rdap', rdap_server: base, ...EMPTY_NETWORK, raw: '', hops: [], error: null };
    if (base === null) return { ...result, error: `no RDAP service for ${query} in the bootstrap registry` };
    const fetched = await this.#get(new URL(path, base), 'network', this.#run(signal), result.hops);
    const answer = fetched.answer;
    if (answer === null) return { ...result, error: fetched.error };
    result.raw = answer.raw;
    if (answer.status === 404) return { ...result, error: `${answer.url}: not found (HTTP 404): no registration for ${query}` };
    const decoded = answer.decoded;
    if (decoded?.network == null) return { ...result, error: fetched.error ?? `${answer.url}: HTTP ${answer.status}, no RDAP object` };
    const cls = decoded.objectClass;
    if (cls !== null && cls !== objectClass) return { ...result, error: `${answer.url}: an RDAP "${cls}" object, not "${objectClass}"` };
    return { ...result, ...decoded.network };
  }

  /** The lookup's deadline and the caller's abort, and when it started. */
  #run(signal: AbortSignal | undefined): { stop: AbortSignal; caller: AbortSignal | undefined; started: number } {
    const deadline = AbortSignal.timeout(this.#totalTimeoutMs);
    return { stop: signal ? AbortSignal.any([deadline, signal]) : deadline, caller: signal, started: performance.now() };
  }

  /**
   * GET with redirects (each a new request through `http`: resolved and checked by the target
   * policy again), every request reported in `hops`. Rejects only when the caller aborts.
   */
  async #get(first: URL, kind: AnswerKind, run: { stop: AbortSignal; caller: AbortSignal | undefined; started: number }, hops: RdapHopReport[]): Promise<Fetched> {
    let url = first;
    for (let redirects = 0; ; redirects++) {
      const t0 = performance.now();
      const left = this.#totalTimeoutMs - (t0 - run.started);
      const hop = (status: RdapHopReport['status'], error: string | null, bytes = 0): RdapHopReport => {
        const report = { server: url.href, status, error, bytes, response_time: round2(performance.now() - t0) };
        hops.push(report);
        return report;
      };
      if (left <= 0) return { answer: null, error: hop('timeout', `${url.href}: the RDAP lookup ran out of time`).error };
      const timeoutMs = Math.min(this.#requestTimeoutMs, left);
      const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), run.stop]);
      let res;
      try {
        res = await this.#http.get(url, { timeoutMs, maxBytes: this.#maxBytes, signal, accept: RDAP_ACCEPT });
      } catch (err) {
        run.caller?.throwIfAborted();
        if (signal.aborted) return { answer: null, error: hop('timeout', `${url.href}: no complete answer within ${Math.round(timeoutMs)} ms`).error };
        return { answer: null, error: hop('failed', `${url.href}: ${reasonOf(err)}`).error };
      }
      run.caller?.throwIfAborted();
      if (res.truncated) {
        return { answer: null, error: hop('truncated', `${url.href}: answer larger than ${this.#maxBytes} bytes, cut off`, res.bytes).error };
      }
      if (res.status >= 300 && res.status < 400 && res.location !== null) {
        let next: URL | null = null;
        try {
          next = new URL(res.location, url);
        } catch {
          next = null;
        }
        if (next === null || (next.protocol !== 'https:' && next.protocol !== 'http:')) {
          return { answer: null, error: hop('failed', `${url.href}: redirect (${res.status}) to something that is no http(s) URL`, res.bytes).error };
        }
        hop('ok', null, res.bytes);
        if (redirects >= this.#maxRedirects) return { answer: null, error: `${first.href}: more than ${this.#maxRedirects} redirects` };
        url = next;
        continue;
      }
      let decoded: DecodedAnswer | null = null;
      let raw: string;
      let error: string | null = null;
      if (res.status >= 200 && res.status < 300) {
        try {
          decoded = await this.#decoder.decode(res.body, kind, run.stop);
        } catch (err) {
          run.caller?.throwIfAborted();
          return { answer: null, error: hop(run.stop.aborted ? 'timeout' : 'failed', `${url.href}: ${run.stop.aborted ? 'the RDAP lookup ran out of time' : reasonOf(err)}`, res.bytes).error };
        }
        run.caller?.throwIfAborted();
        raw = decoded.raw;
        if (decoded.error !== null) {
          error = `${url.href}: ${decoded.error}`;
          decoded = null;
        }
      } else {
        // An error page: its start, for `raw`; nothing in it is read.
        raw = new TextDecoder('utf-8').decode(res.body.subarray(0, RDAP_MAX_RAW_CHARS));
      }
      hop(error === null ? 'ok' : 'failed', error, res.bytes);
      return { answer: { url: url.href, status: res.status, raw, decoded }, error };
    }
  }
}
