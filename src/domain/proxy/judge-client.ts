import ipaddr from 'ipaddr.js';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import { JudgeUnavailableError } from '../../errors.js';
import { MAX_ECHO_BYTES, OWN_ADDRESS_REFRESH_MS, OWN_ADDRESS_RETRY_MS, OWN_ADDRESS_TIMEOUT_MS } from './defaults.js';
import { normalizeAddress, type Judge } from './judge.js';
import { echoSigned, uploadSigned } from './judge-signing.js';
import type { JudgeEcho } from './types.js';

/** Where proxies are sent: see JudgeDirectory. */
export class JudgeTarget {
  readonly url: URL;
  /** Hostname or address, IPv6 without brackets. */
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  readonly #base: string;

  constructor(url: string) {
    this.url = new URL(url);
    if (this.url.protocol !== 'http:' && this.url.protocol !== 'https:') throw new TypeError(`judge URL must be http(s), got ${url}`);
    this.tls = this.url.protocol === 'https:';
    this.host = this.url.hostname.replace(/^\[|\]$/g, '');
    this.port = this.url.port ? Number(this.url.port) : this.tls ? 443 : 80;
    let end = this.url.pathname.length;
    while (end > 0 && this.url.pathname[end - 1] === '/') end--;
    this.#base = this.url.pathname.slice(0, end);
  }

  /** `Host` header value. */
  get authority(): string {
    return this.url.host;
  }

  /** Origin-form path of a judge resource for one nonce (`suffix` '' | '/download' | '/upload'). */
  path(nonce: string, suffix = ''): string {
    return `${this.#base}/${nonce}${suffix}`;
  }

  /** Absolute-form, as an HTTP proxy is asked. */
  absolute(nonce: string, suffix = ''): string {
    return `${this.url.protocol}//${this.url.host}${this.path(nonce, suffix)}`;
  }
}

/**
 * The judge URL of a server listening on `bound`: a wildcard listener is reached by its first
 * public interface address, else its first non-internal one, else loopback. Operators behind
 * NAT or a reverse proxy set NETDIAG_JUDGE_URL instead.
 */
export function defaultJudgeUrl(bound: { address: string; port: number }, interfaces = os.networkInterfaces()): string {
  let host = bound.address;
  if (host === '0.0.0.0' || host === '::') {
    const all = Object.values(interfaces).flatMap((list) => list ?? []);
    const external = all.filter((i) => !i.internal && (i.family === 'IPv4' || host === '::') && !i.address.startsWith('fe80'));
    const isPublic = (a: string): boolean => ipaddr.isValid(a) && ipaddr.process(a).range() === 'unicast';
    host = (external.find((i) => isPublic(i.address)) ?? external[0])?.address ?? (host === '::' ? '::1' : '127.0.0.1');
  }
  host = normalizeAddress(host);
  return `http://${host.includes(':') ? `[${host}]` : host}:${bound.port}/judge`;
}

/** How long a process that serves no judge keeps the judge URL it read from the database before it reads it again. */
export const RECORDED_JUDGE_REFRESH_MS = 30_000;

/** Where the judge URL of an API instance is kept for the processes that serve none: the database (Store.judge). */
export interface JudgeUrlRecord {
  recordUrl(url: string): Promise<void>;
  recordedUrl(): Promise<string | null>;
}

/**
 * The judge every process of a deployment uses (docs/proxy.md): NETDIAG_JUDGE_URL, else
 * NETDIAG_PUBLIC_URL + /judge (`configured`, either way); else, in a process that listens, its
 * own /judge; else (`netdiag worker`) the judge an API instance recorded in the database. A
 * process that listens records the judge it uses there when it starts listening.
 */
export class JudgeDirectory {
  readonly #configured: JudgeTarget | null;
  readonly #record: JudgeUrlRecord | undefined;
  readonly #now: () => number;
  #own: JudgeTarget | null = null;
  #recorded: JudgeTarget | null = null;
  #readAt = -Infinity;
  #reading: Promise<void> | null = null;
  #readError: string | null = null;

  constructor(opts: { configured?: string | undefined; record?: JudgeUrlRecord | undefined; now?: () => number } = {}) {
    this.#configured = opts.configured ? new JudgeTarget(opts.configured) : null;
    this.#record = opts.record;
    this.#now = opts.now ?? Date.now;
  }

  /** The judge known now, without asking the database. */
  get current(): JudgeTarget | null {
    return this.#configured ?? this.#own ?? this.#recorded;
  }

  /** The judge a check sends its proxy to; JudgeUnavailableError when there is none. */
  async target(): Promise<JudgeTarget> {
    const known = this.#configured ?? this.#own;
    if (known) return known;
    // While none is recorded every check asks again (reads in flight are shared): the first
    // API instance to listen is used at once.
    if (this.#record && (!this.#recorded || this.#now() - this.#readAt >= RECORDED_JUDGE_REFRESH_MS)) await this.#read();
    if (this.#recorded) return this.#recorded;
    throw new JudgeUnavailableError(this.#readError ?? 'no judge: no judge URL is set and no API instance has recorded its judge in the database');
  }

  #read(): Promise<void> {
    this.#reading ??= this.#record!.recordedUrl()
      .then((url) => {
        this.#readError = null;
        if (url === null) this.#recorded = null;
        else if (url !== this.#recorded?.url.href) this.#recorded = new JudgeTarget(url);
      })
      .catch((err: unknown) => {
        // A database that does not answer keeps the judge read before, if any.
        this.#readError = `no judge: the judge URL recorded in the database could not be read (${err instanceof Error ? err.message : String(err)})`;
      })
      .finally(() => {
        this.#readAt = this.#now();
        this.#reading = null;
      });
    return this.#reading;
  }

  /** This process listens on `bound`: its own /judge is the judge unless one is configured; the one it uses is recorded. */
  listening(bound: { address: string; port: number }): Promise<void> {
    if (!this.#configured) this.#own = new JudgeTarget(defaultJudgeUrl(bound));
    return this.#record ? this.#record.recordUrl(this.current!.url.href) : Promise.resolve();
  }
}

/**
 * Whether a process can judge proxy checks: the judge it would use, and why it cannot when it
 * cannot (no judge URL, or a judge that does not answer it directly with an echo signed by our
 * key). `netdiag worker` says so at start.
 */
export async function judgeHealth(checker: { judges: JudgeDirectory; ownAddresses: OwnAddresses }): Promise<{ url: string | null; error: string | null }> {
  let url: string;
  try {
    url = (await checker.judges.target()).url.href;
  } catch (err) {
    return { url: null, error: err instanceof Error ? err.message : String(err) };
  }
  await checker.ownAddresses.refresh();
  const error = checker.ownAddresses.error;
  return { url, error: error === null ? null : new JudgeUnavailableError(`the judge ${url} does not answer this process (${error})`).message };
}

/** A body that is a JSON object, or null for anything else (what a proxy sends is not trusted to be JSON). */
function jsonObject(body: Buffer): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
}

const isHeader = (h: unknown): h is [string, string] => Array.isArray(h) && h.length === 2 && typeof h[0] === 'string' && typeof h[1] === 'string';

/**
 * The judge's answer for this nonce, or null when the body is not one: not JSON, for another
 * nonce, or not signed by the judge's key. A proxy can relay, drop or add headers on the way
 * to the judge, but an echo it made up or rewrote on the way back is null here, however
 * plausible it looks. `key` is the judge's signing key (Judge.key()).
 */
export function parseEcho(body: Buffer, nonce: string, key: Buffer): JudgeEcho | null {
  const v = jsonObject(body);
  if (v === null) return null;
  if (v.nonce !== nonce || typeof v.remote_address !== 'string' || typeof v.method !== 'string' || !Array.isArray(v.headers)) return null;
  // The signature covers every header as sent: one that is not a pair is tampering, not noise.
  if (!v.headers.every(isHeader)) return null;
  const echo: JudgeEcho = { nonce, remote_address: v.remote_address, method: v.method, headers: v.headers };
  return echoSigned(key, echo, v.signature) ? echo : null;
}

/** The byte count of the judge's signed upload receipt for this nonce, or null when the body is not one. */
export function parseUploadReceipt(body: Buffer, nonce: string, key: Buffer): number | null {
  const v = jsonObject(body);
  if (v === null) return null;
  const { bytes, signature } = v;
  if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes)) return null;
  return uploadSigned(key, nonce, bytes, signature) ? bytes : null;
}

/** A direct (no proxy) GET of the judge; the judge URL is the operator's, not a user's target. */
function directEcho(judge: JudgeTarget, nonce: string, key: Buffer, timeoutMs: number): Promise<JudgeEcho> {
  return new Promise((resolve, reject) => {
    const get = judge.tls ? https.get : http.get;
    const req = get(judge.absolute(nonce), { agent: false, timeout: timeoutMs, headers: { accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= MAX_ECHO_BYTES) chunks.push(c);
      });
      res.on('end', () => {
        const echo = res.statusCode === 200 ? parseEcho(Buffer.concat(chunks), nonce, key) : null;
        if (echo) resolve(echo);
        else if (res.statusCode === 200) reject(new Error('the judge answered with an echo that is not signed with our judge key (is NETDIAG_JUDGE_SECRET the same on every instance?)'));
        // The judge refuses a nonce it cannot verify with the same 404 as an unknown path.
        else if (res.statusCode === 404) reject(new Error('the judge answered HTTP 404: it is not a netdiag judge, or it refused our nonce (is NETDIAG_JUDGE_SECRET the same on every process, or unset on all of them?)'));
        else reject(new Error(`the judge answered HTTP ${res.statusCode} without an echo`));
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from the judge within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

/**
 * Our own public address(es), as our judge sees us when we call it directly. Learned when the
 * server starts listening and refreshed now and then; while unknown, `get()` tries again
 * (not more often than OWN_ADDRESS_RETRY_MS) and otherwise returns an empty set, which keeps
 * every verdict away from `transparent` rather than guessing.
 */
export class OwnAddresses {
  #known = new Set<string>();
  #learnedAt = -Infinity;
  #triedAt = -Infinity;
  #pending: Promise<void> | null = null;
  #lastError: string | null = 'not learned yet';
  /** The judge URL the addresses (or the error) came from: another judge is asked afresh. */
  #askedJudge: string | null = null;
  readonly #judge: () => JudgeTarget | null;
  readonly #nonces: Pick<Judge, 'issue' | 'revoke' | 'key'>;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  /** Addresses from configuration or tests, always included. */
  readonly #fixed: ReadonlySet<string>;

  constructor(opts: {
    judge: () => JudgeTarget | null;
    nonces: Pick<Judge, 'issue' | 'revoke' | 'key'>;
    timeoutMs?: number;
    now?: () => number;
    fixed?: Iterable<string>;
  }) {
    this.#judge = opts.judge;
    this.#nonces = opts.nonces;
    this.#timeoutMs = opts.timeoutMs ?? OWN_ADDRESS_TIMEOUT_MS;
    this.#now = opts.now ?? Date.now;
    this.#fixed = new Set([...(opts.fixed ?? [])].map(normalizeAddress));
  }

  /** Why the address is unknown, or null when it is known. */
  get error(): string | null {
    return this.known.size > 0 ? null : this.#lastError;
  }

  get known(): ReadonlySet<string> {
    return new Set([...this.#fixed, ...this.#known]);
  }

  /** Asks the judge now (deduplicated with a request already in flight). */
  refresh(): Promise<void> {
    if (this.#pending) return this.#pending;
    const judge = this.#judge();
    if (!judge) {
      this.#lastError = 'no judge URL yet (the server is not listening, NETDIAG_JUDGE_URL and NETDIAG_PUBLIC_URL are unset, and no API instance recorded one in the database)';
      return Promise.resolve();
    }
    this.#triedAt = this.#now();
    if (judge.url.href !== this.#askedJudge) {
      this.#askedJudge = judge.url.href;
      this.#known = new Set();
    }
    this.#pending = this.#learn(judge)
      .then((address) => {
        this.#known = new Set([normalizeAddress(address)]);
        this.#learnedAt = this.#now();
        this.#lastError = null;
      })
      .catch((err: unknown) => {
        this.#lastError = `our own address could not be learned from the judge: ${err instanceof Error ? err.message : String(err)}`;
      })
      .finally(() => {
        this.#pending = null;
      });
    return this.#pending;
  }

  /** One direct echo, on a nonce of its own that grants nothing else. */
  async #learn(judge: JudgeTarget): Promise<string> {
    const nonce = await this.#nonces.issue(['echo']);
    try {
      return (await directEcho(judge, nonce, await this.#nonces.key(), this.#timeoutMs)).remote_address;
    } finally {
      // Its one use is spent already unless the request failed; a failed revoke leaves it to expire.
      await this.#nonces.revoke(nonce).catch(() => undefined);
    }
  }

  /** The known addresses, learning them first when unknown or stale. */
  async get(): Promise<ReadonlySet<string>> {
    const now = this.#now();
    const judge = this.#judge();
    if (this.#pending) await this.#pending;
    else if (judge && judge.url.href !== this.#askedJudge) await this.refresh();
    else if (this.#known.size === 0 ? now - this.#triedAt >= OWN_ADDRESS_RETRY_MS : now - this.#learnedAt >= OWN_ADDRESS_REFRESH_MS) {
      await this.refresh();
    }
    return this.known;
  }
}
