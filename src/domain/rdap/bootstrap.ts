import { readFileSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import { field, list, obj, parseJsonText, str } from './json.js';
import { RDAP_BOOTSTRAP_MAX_ENTRIES, RDAP_BOOTSTRAP_MAX_JSON_DEPTH, RDAP_BOOTSTRAP_MAX_SERVICES, RDAP_BOOTSTRAP_RETRY_MS, RDAP_BOOTSTRAP_TIMEOUT_MS, RDAP_BOOTSTRAP_TTL_MS } from './defaults.js';
import { unlessAborted, withDeadline } from '../../lib/deadline.js';
import type { BootstrapKind, BootstrapSource } from './types.js';

/**
 * RFC 9224 bootstrap registries: `{"version", "publication", "services": [[[entries...], [urls...]], ...]}`
 * where entries are TLDs (dns.json), CIDR blocks (ipv4.json, ipv6.json) or AS ranges "64512-65534"
 * (asn.json). A file is checked for shape as it is read: whatever is not an array of strings where
 * one is expected is skipped, never trusted; counts are bounded.
 */

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

export interface BootstrapFile {
  kind: BootstrapKind;
  publication: string | null;
  /** Where it came from: the source's place, or "snapshot". */
  origin: string;
  /** dns: lowercase TLD (or longer suffix) -> its service's base URLs. */
  readonly names: Map<string, string[]>;
  readonly cidrs: Array<{ cidr: Cidr; urls: string[] }>;
  readonly asns: Array<{ start: number; end: number; urls: string[] }>;
}

/** http(s) base URLs, https first (RFC 9224 5: prefer https), each ending in "/". */
function baseUrls(value: unknown): string[] {
  const https: string[] = [];
  const http: string[] = [];
  for (const item of list(value)) {
    const s = str(item);
    if (s === null) continue;
    let url: URL;
    try {
      url = new URL(s);
    } catch {
      continue;
    }
    if (url.username || url.password || url.search || url.hash) continue;
    const text = url.href.endsWith('/') ? url.href : `${url.href}/`;
    if (url.protocol === 'https:') https.push(text);
    else if (url.protocol === 'http:') http.push(text);
  }
  return [...https, ...http];
}

const AS_RANGE = /^(\d{1,10})(?:-(\d{1,10}))?$/;

/** Parses one bootstrap file; throws an Error (with why) when it is no bootstrap file at all. */
export function parseBootstrap(kind: BootstrapKind, text: string, origin: string): BootstrapFile {
  const parsed = parseJsonText(text, RDAP_BOOTSTRAP_MAX_JSON_DEPTH);
  if ('error' in parsed) throw new Error(`${kind}.json: ${parsed.error}`);
  const root = obj(parsed.value);
  const services = field(root, 'services');
  if (!Array.isArray(services)) throw new Error(`${kind}.json: no "services" array`);
  const file: BootstrapFile = { kind, publication: str(field(root, 'publication')), origin, names: new Map(), cidrs: [], asns: [] };
  let entries = 0;
  for (const service of services.slice(0, RDAP_BOOTSTRAP_MAX_SERVICES)) {
    if (!Array.isArray(service) || service.length < 2) continue;
    // RFC 8521 object-tag files put the tags first: [[tags], [entries], [urls]]; the last two are ours.
    const urls = baseUrls(service[service.length - 1]);
    if (urls.length === 0) continue;
    const keys = service[service.length - 2];
    if (!Array.isArray(keys)) continue;
    for (const key of keys) {
      if (++entries > RDAP_BOOTSTRAP_MAX_ENTRIES) break;
      const s = str(key);
      if (s === null) continue;
      if (kind === 'dns') {
        file.names.set(s.toLowerCase().replace(/\.$/, ''), urls);
      } else if (kind === 'asn') {
        const m = AS_RANGE.exec(s);
        if (!m) continue;
        const start = Number(m[1]);
        const end = m[2] === undefined ? start : Number(m[2]);
        if (start <= end && end <= 0xffffffff) file.asns.push({ start, end, urls });
      } else {
        try {
          const cidr = ipaddr.parseCIDR(s);
          if ((cidr[0].kind() === 'ipv4') === (kind === 'ipv4')) file.cidrs.push({ cidr, urls });
        } catch {
          // not a CIDR block: skipped
        }
      }
    }
  }
  return file;
}

/** The base URLs for a domain: its longest suffix listed (RFC 9224 4: "com", or "co.uk" before "uk"). */
export function urlsForDomain(file: BootstrapFile, domain: string): string[] | null {
  const labels = domain.toLowerCase().split('.');
  for (let i = 0; i < labels.length; i++) {
    const urls = file.names.get(labels.slice(i).join('.'));
    if (urls) return urls;
  }
  return null;
}

/** The base URLs for an address: the longest matching prefix (RFC 9224 5.1). */
export function urlsForAddress(file: BootstrapFile, address: ipaddr.IPv4 | ipaddr.IPv6): string[] | null {
  let best: { bits: number; urls: string[] } | null = null;
  for (const { cidr, urls } of file.cidrs) {
    if (cidr[0].kind() !== address.kind()) continue;
    if ((best === null || cidr[1] > best.bits) && address.match(cidr)) best = { bits: cidr[1], urls };
  }
  return best?.urls ?? null;
}

export function urlsForAsn(file: BootstrapFile, asn: number): string[] | null {
  let best: { size: number; urls: string[] } | null = null;
  for (const { start, end, urls } of file.asns) {
    if (asn >= start && asn <= end && (best === null || end - start < best.size)) best = { size: end - start, urls };
  }
  return best?.urls ?? null;
}

/** The snapshot shipped in the package (data/*.json beside this file; data/README.md says what it holds). */
export const SNAPSHOT_DIR = new URL('./data/', import.meta.url);

const snapshots = new Map<BootstrapKind, BootstrapFile>();

export function snapshot(kind: BootstrapKind): BootstrapFile {
  let file = snapshots.get(kind);
  if (!file) {
    file = parseBootstrap(kind, readFileSync(new URL(`${kind}.json`, SNAPSHOT_DIR), 'utf8'), 'snapshot');
    snapshots.set(kind, file);
  }
  return file;
}

export interface BootstrapRegistryOptions {
  /** Fresh files; null: the snapshot only. */
  source: BootstrapSource | null;
  now?: () => number;
  ttlMs?: number;
  retryMs?: number;
  fetchTimeoutMs?: number;
  /** Told when a fetch fails and the snapshot (or the last good file) is used instead. */
  onFetchError?: (kind: BootstrapKind, err: unknown) => void;
}

interface Cached {
  file: BootstrapFile;
  until: number;
}

/**
 * The bootstrap files in use: fetched from the source on first use and again a day later (one
 * fetch at a time per file, shared by every lookup waiting for it), the shipped snapshot when a
 * fetch fails (then retried after RDAP_BOOTSTRAP_RETRY_MS, the last good file kept meanwhile).
 * A fetch is nobody's request: a caller that gives up stops waiting, the fetch goes on.
 */
export class BootstrapRegistry {
  readonly #source: BootstrapSource | null;
  readonly #now: () => number;
  readonly #ttlMs: number;
  readonly #retryMs: number;
  readonly #fetchTimeoutMs: number;
  readonly #onFetchError: ((kind: BootstrapKind, err: unknown) => void) | undefined;
  readonly #cache = new Map<BootstrapKind, Cached>();
  readonly #pending = new Map<BootstrapKind, Promise<BootstrapFile>>();

  constructor(opts: BootstrapRegistryOptions) {
    this.#source = opts.source;
    this.#now = opts.now ?? Date.now;
    this.#ttlMs = opts.ttlMs ?? RDAP_BOOTSTRAP_TTL_MS;
    this.#retryMs = opts.retryMs ?? RDAP_BOOTSTRAP_RETRY_MS;
    this.#fetchTimeoutMs = opts.fetchTimeoutMs ?? RDAP_BOOTSTRAP_TIMEOUT_MS;
    this.#onFetchError = opts.onFetchError;
  }

  async file(kind: BootstrapKind, signal?: AbortSignal): Promise<BootstrapFile> {
    const cached = this.#cache.get(kind);
    if (cached && cached.until > this.#now()) return cached.file;
    if (this.#source === null) return snapshot(kind);
    let pending = this.#pending.get(kind);
    if (!pending) {
      pending = this.#refresh(kind, this.#source, cached?.file).finally(() => this.#pending.delete(kind));
      this.#pending.set(kind, pending);
    }
    return signal ? unlessAborted(pending, signal) : pending;
  }

  async #refresh(kind: BootstrapKind, source: BootstrapSource, last: BootstrapFile | undefined): Promise<BootstrapFile> {
    const stop = new AbortController();
    try {
      const text = await withDeadline(source.fetch(kind, stop.signal), this.#fetchTimeoutMs, () => {
        stop.abort();
        throw new Error(`no answer within ${this.#fetchTimeoutMs} ms`);
      });
      const file = parseBootstrap(kind, text, source.where);
      this.#cache.set(kind, { file, until: this.#now() + this.#ttlMs });
      return file;
    } catch (err) {
      this.#onFetchError?.(kind, err);
      const file = last ?? snapshot(kind);
      this.#cache.set(kind, { file, until: this.#now() + this.#retryMs });
      return file;
    }
  }
}
