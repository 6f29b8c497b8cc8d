/**
 * THE one dialer: every outbound probe (port scan, proxy check, WHOIS, IPv6 test) goes
 * through it, so the target policy is enforced in exactly one place.
 *
 * Contract for callers:
 *
 * 1. `await dialer.resolve(target, { field })` parses the user's target, resolves it (A and
 *    AAAA through the configured DNS servers; `localhost` without DNS) and checks EVERY
 *    address against the policy. It throws
 *      - `ValidationError(field)` (400) for a spelling that is not a host or address,
 *      - `TargetForbiddenError` (403) when any address is in a blocked range — before any
 *        packet is sent to the target,
 *      - `ResolveError` (code `ENOTFOUND` | `ENODATA` | `ETIMEOUT` | ...) when the name does
 *        not resolve; probes report that as a 200 result.
 *    It returns `CheckedAddress`es, IPv4 first unless `prefer: 6`.
 * 2. `await dialer.connect(address, port, { timeoutMs, signal, budget })` opens TCP to that
 *    very address; it never resolves a name again, so DNS rebinding cannot redirect it. It
 *    resolves a connected `net.Socket` or rejects with `DialError` (code `ECONNREFUSED` |
 *    `ETIMEDOUT` | `EHOSTUNREACH` | `ENETUNREACH` | `ABORT_ERR` | ..., `elapsedMs`). Every
 *    socket is destroyed on every failure path. `dial()` is the same but also returns the
 *    connect time.
 * 3. The caller owns a returned socket: attach an `'error'` listener and `destroy()` or `end()`
 *    it when done. Its slot in the global budget (and in `budget`) is freed when it closes.
 * 4. Its budget is the process's one socket budget (numbers in defaults.ts), shared fairly
 *    between owners (accounts: `owner`, or the `runAsOwner` context of src/domain/owner.ts): dials beyond
 *    it wait (the timeout only starts when the connect does), a freed slot goes to the waiting
 *    owner holding the fewest, no owner holds more than MAX_PER_OWNER_SOCKETS, and an aborted
 *    signal takes a waiting dial out of the queue. The wait is reported apart (`queuedMs`),
 *    never in a connect time. `dialer.socketBudget(n)` gives one request its own smaller cap within
 *    it (at most MAX_PER_REQUEST_SOCKETS); no caller keeps a socket budget of its own.
 *
 * Anything that needs a socket to a user-chosen host and does not come through here is a bug.
 */
import ipaddr from 'ipaddr.js';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Config } from '../../config.js';
import { MAX_ADDRESSES_PER_FAMILY, MAX_GLOBAL_SOCKETS, MAX_PER_OWNER_SOCKETS, MAX_PER_REQUEST_SOCKETS, RESERVED_BELOW_SOCKETS } from './defaults.js';
import { MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import { currentOwner } from '../../domain/owner.js';
import { parseIpStrict } from '../../net/ip-text.js';
import { SocketBudget } from '../../domain/socket-budget.js';
import { TargetPolicy } from './policy.js';
import { DnsHostResolver, resolveErrorFor, type HostResolver } from './resolver.js';
import type { CheckedAddress, ConnectOptions, DialResult, Dialer as DialerContract, ProbeCode, ProbeResult, ResolvedTarget, ResolveOptions } from '../../domain/dialer.js';
import { parseTarget } from '../../net/target.js';
import { rawConnect } from './raw-connect.js';
import { round2 } from '../../lib/round.js';
import { DialError, type DialErrorCode, ResolveError } from '../../errors.js';

const KNOWN_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'EADDRNOTAVAIL',
  'EACCES',
  'EPERM',
]);

export interface DialerStats {
  /** Sockets created (connect attempts actually started). */
  readonly connectAttempts: number;
  /** Sockets open or connecting now. */
  readonly active: number;
  /** Dials queued for the global budget. */
  readonly waiting: number;
}

export type ConnectFn = (opts: net.TcpNetConnectOpts) => net.Socket;

export interface DialerOptions {
  policy: TargetPolicy;
  resolver: HostResolver;
  maxGlobalSockets?: number;
  /** Of those, the most one owner may hold; default MAX_PER_OWNER_SOCKETS (capped at maxGlobalSockets). */
  maxPerOwnerSockets?: number;
  /** Replaces net.connect; tests use it to see (and fake) every connect. */
  connectFn?: ConnectFn;
}

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

/** The text a socket connects to: the IPv4 itself for IPv4-mapped, the zone kept for link-local. */
function dialText(addr: Addr): { text: string; family: 4 | 6 } {
  if (addr.kind() === 'ipv4') return { text: addr.toString(), family: 4 };
  const v6 = addr as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return { text: v6.toIPv4Address().toString(), family: 4 };
  const base = new ipaddr.IPv6(v6.parts).toString();
  return { text: v6.zoneId ? `${base}%${v6.zoneId}` : base, family: 6 };
}

// Node skips lookup for IP literals; this makes "the dialer never resolves" hold even if not.
const refuseLookup: net.LookupFunction = (hostname, _options, callback) => {
  callback(Object.assign(new Error(`dialer never resolves names (${hostname})`), { code: 'EDIAL' }), '', 0);
};

export class Dialer implements DialerContract {
  readonly policy: TargetPolicy;
  readonly #resolver: HostResolver;
  readonly #connectFn: ConnectFn;
  /** A connectFn was given: every connect goes through it, probes included. */
  readonly #customConnect: boolean;
  readonly #global: SocketBudget;
  readonly #counters = { connectAttempts: 0, active: 0 };
  readonly stats: DialerStats;

  constructor(opts: DialerOptions) {
    if (!(opts.policy instanceof TargetPolicy)) throw new TypeError('Dialer: opts.policy must be a TargetPolicy');
    if (typeof opts.resolver?.resolve !== 'function') {
      throw new TypeError('Dialer: opts.resolver must implement HostResolver.resolve(hostname, family)');
    }
    this.policy = opts.policy;
    this.#resolver = opts.resolver;
    this.#connectFn = opts.connectFn ?? ((o) => net.connect(o));
    this.#customConnect = opts.connectFn !== undefined;
    this.#global = new SocketBudget(opts.maxGlobalSockets ?? MAX_GLOBAL_SOCKETS, {
      maxPerOwner: opts.maxPerOwnerSockets ?? MAX_PER_OWNER_SOCKETS,
      reservedBelow: RESERVED_BELOW_SOCKETS,
    });
    const counters = this.#counters;
    const global = this.#global;
    this.stats = {
      get connectAttempts() {
        return counters.connectAttempts;
      },
      get active() {
        return counters.active;
      },
      get waiting() {
        return global.waiting;
      },
    };
  }

  /** Parse + resolve + policy-check. See the contract at the top of this file. */
  async resolve(target: string, opts: ResolveOptions = {}): Promise<ResolvedTarget> {
    const field = opts.field ?? 'target';
    const family = opts.family ?? 0;
    const parsed = parseTarget(target, field);
    const shown = typeof target === 'string' ? target.trim() : String(target);

    let found: Addr[];
    let hostname: string | null = null;
    if (parsed.kind === 'ip') {
      found = [parsed.address];
    } else {
      hostname = parsed.hostname;
      // Like a DNS answer, localhost only yields the asked family, so only that is checked.
      found = parsed.localhost
        ? [ipaddr.IPv4.parse('127.0.0.1'), ipaddr.IPv6.parse('::1')].filter(
            (a) => family === 0 || (a.kind() === 'ipv4' ? 4 : 6) === family,
          )
        : await this.#lookup(parsed.hostname, family);
    }

    // Every address is checked, including ones filtered out below: one blocked answer is
    // enough to refuse, so a name cannot smuggle a private address in behind a public one.
    for (const addr of found) this.policy.check(shown, addr);

    const seen = new Set<string>();
    const byFamily: Record<4 | 6, CheckedAddress[]> = { 4: [], 6: [] };
    for (const addr of found) {
      const { text, family: f } = dialText(addr);
      if (seen.has(text) || (family !== 0 && f !== family)) continue;
      seen.add(text);
      if (byFamily[f].length < MAX_ADDRESSES_PER_FAMILY) byFamily[f].push(text as CheckedAddress);
    }
    const addresses = opts.prefer === 6 ? [...byFamily[6], ...byFamily[4]] : [...byFamily[4], ...byFamily[6]];
    if (addresses.length === 0) {
      const err =
        parsed.kind === 'ip'
          ? new ResolveError('ENODATA', shown, `${shown} is not an IPv${family} address`)
          : resolveErrorFor('ENODATA', hostname ?? shown, family === 0 ? 4 : family);
      throw err;
    }
    return { target: shown, hostname, addresses };
  }

  async #lookup(hostname: string, family: 0 | 4 | 6): Promise<Addr[]> {
    const families: Array<4 | 6> = family === 0 ? [4, 6] : [family];
    const settled = await Promise.allSettled(families.map((f) => this.#resolver.resolve(hostname, f)));
    const addrs: Addr[] = [];
    const errors: ResolveError[] = [];
    settled.forEach((s, i) => {
      const f = families[i]!;
      if (s.status === 'rejected') {
        errors.push(s.reason instanceof ResolveError ? s.reason : resolveErrorFor('EDNS', hostname, f));
        return;
      }
      for (const text of s.value) {
        const addr = parseIpStrict(text);
        // A resolver handing back something that is not an address is a resolver failure.
        if (addr === null || (addr.kind() === 'ipv4' ? 4 : 6) !== f) {
          throw resolveErrorFor('EDNS', hostname, f);
        }
        addrs.push(addr);
      }
    });
    if (addrs.length > 0) return addrs;
    const notFound = errors.find((e) => e.code === 'ENOTFOUND');
    if (notFound) throw notFound;
    if (errors.length > 0 && errors.every((e) => e.code === 'ENODATA')) {
      if (families.length === 1) throw errors[0]!;
      throw new ResolveError('ENODATA', hostname, `${hostname} has no A or AAAA record`);
    }
    throw errors.find((e) => e.code !== 'ENODATA') ?? resolveErrorFor('ENODATA', hostname, families[0]!);
  }

  /** TCP connect to a checked address. See the contract at the top of this file. */
  async connect(address: CheckedAddress, port: number, opts: ConnectOptions): Promise<net.Socket> {
    return (await this.dial(address, port, opts)).socket;
  }

  /**
   * Everything before a connect, shared by dial() and probe(): the arguments, the policy check
   * of the very address (a string cast into CheckedAddress is caught here), then this request's
   * slot and the global one. `release` frees the slots once, whichever path calls it.
   */
  async #admit(
    address: CheckedAddress,
    port: number,
    opts: ConnectOptions,
  ): Promise<{ host: string; family: 4 | 6; release: () => void; queuedMs: number }> {
    if (!Number.isInteger(port) || port < MIN_PORT || port > MAX_PORT) {
      throw new RangeError(`Dialer: port must be an integer ${MIN_PORT}-${MAX_PORT}, got ${port}`);
    }
    if (!(opts.timeoutMs > 0) || !Number.isFinite(opts.timeoutMs)) {
      throw new RangeError(`Dialer: timeoutMs must be a positive number, got ${opts.timeoutMs}`);
    }
    const { host, family } = this.#checked(address);
    const { signal } = opts;

    const queued = performance.now();
    const owner = opts.owner ?? currentOwner();
    // A free slot is taken at once; only a dial that must wait for one waits on a promise.
    let requestSlot: (() => void) | null = null;
    let globalSlot: (() => void) | null = null;
    try {
      if (opts.budget) requestSlot = opts.budget.tryAcquire() ?? (await opts.budget.acquire(signal));
      globalSlot = this.#global.tryAcquire(owner) ?? (await this.#global.acquire(signal, owner));
      // The signal may fire between the grant and this line; no socket for a dead request.
      signal?.throwIfAborted();
    } catch (err) {
      requestSlot?.();
      globalSlot?.();
      throw new DialError('ABORT_ERR', host, port, 0, err);
    }
    this.#counters.connectAttempts++;
    this.#counters.active++;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.#counters.active--;
      requestSlot?.();
      globalSlot();
    };
    return { host, family, release, queuedMs: round2(performance.now() - queued) };
  }

  /** The last address checked: a scan dials one address a thousand times. */
  #lastChecked: { address: string; host: string; family: 4 | 6 } | null = null;

  #checked(address: CheckedAddress): { host: string; family: 4 | 6 } {
    const last = this.#lastChecked;
    if (last !== null && last.address === address) return last;
    const addr = parseIpStrict(address);
    if (addr === null) throw new TypeError(`Dialer: ${JSON.stringify(address)} is not an address from resolve()`);
    this.policy.check(address, addr);
    const { text: host, family } = dialText(addr);
    this.#lastChecked = { address, host, family };
    return this.#lastChecked;
  }

  /**
   * A connect scan's question: does `port` accept a connection? The same policy check and socket
   * budget as dial(); a connection that is made is reset at once. It runs on the bare TCP handle
   * (raw-connect.ts) unless a `connectFn` was given (tests watch every connect through it) or this
   * Node lacks the handle, and then through dial(). Rejects only with DialError('ABORT_ERR').
   */
  async probe(address: CheckedAddress, port: number, opts: ConnectOptions): Promise<ProbeResult> {
    if (this.#customConnect || rawConnect === null) return this.#probeBySocket(address, port, opts);
    const { host, family, release, queuedMs } = await this.#admit(address, port, opts);
    try {
      const r = await rawConnect(host, family, port, opts.timeoutMs, opts.signal);
      if (r.code === null) return { code: null, elapsedMs: r.elapsedMs, selfConnect: r.localPort === port && r.localAddress === host, queuedMs };
      const code = KNOWN_CODES.has(r.code) ? (r.code as ProbeCode) : 'EDIAL';
      return { code, elapsedMs: r.elapsedMs, selfConnect: false, queuedMs };
    } catch (err) {
      throw new DialError('ABORT_ERR', host, port, 0, err);
    } finally {
      release();
    }
  }

  async #probeBySocket(address: CheckedAddress, port: number, opts: ConnectOptions): Promise<ProbeResult> {
    try {
      const { socket, elapsedMs, queuedMs } = await this.dial(address, port, opts);
      const selfConnect = socket.localPort === socket.remotePort && socket.localAddress === socket.remoteAddress;
      socket.on('error', () => undefined);
      socket.resetAndDestroy();
      return { code: null, elapsedMs, selfConnect, queuedMs };
    } catch (err) {
      if (!(err instanceof DialError) || err.code === 'ABORT_ERR') throw err;
      return { code: err.code, elapsedMs: err.elapsedMs, selfConnect: false, queuedMs: err.queuedMs };
    }
  }

  /** `connect()` that also reports how long the connect took. */
  async dial(address: CheckedAddress, port: number, opts: ConnectOptions): Promise<DialResult> {
    const { host, family, release: freeSocketSlot, queuedMs } = await this.#admit(address, port, opts);
    const { signal } = opts;
    const started = performance.now();
    let socket: net.Socket;
    try {
      socket = this.#connectFn({ host, port, family, lookup: refuseLookup });
    } catch (err) {
      freeSocketSlot();
      throw new DialError('EDIAL', host, port, 0, err);
    }
    socket.once('close', freeSocketSlot);

    return new Promise<DialResult>((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.off('connect', onConnect);
        socket.off('error', onError);
      };
      const fail = (code: DialErrorCode, cause?: unknown): void => {
        cleanup();
        // A dead socket may still emit; nobody else listens to it, and an unheard 'error' would crash.
        socket.on('error', () => undefined);
        socket.destroy();
        freeSocketSlot();
        reject(new DialError(code, host, port, round2(performance.now() - started), cause, queuedMs));
      };
      const onConnect = (): void => {
        cleanup();
        resolve({ socket, elapsedMs: round2(performance.now() - started), queuedMs });
      };
      const onError = (err: NodeJS.ErrnoException): void => {
        const code = err.code !== undefined && KNOWN_CODES.has(err.code) ? (err.code as DialErrorCode) : 'EDIAL';
        fail(code, err);
      };
      const onAbort = (): void => fail('ABORT_ERR', signal?.reason);
      const timer = setTimeout(() => fail('ETIMEDOUT'), opts.timeoutMs);
      socket.once('connect', onConnect);
      socket.once('error', onError);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * A per-request cap on concurrent sockets, used within the global budget: `maxConcurrent`,
   * or without it (a port scan) MAX_PER_REQUEST_SOCKETS, the most one request may hold.
   */
  socketBudget(maxConcurrent: number = MAX_PER_REQUEST_SOCKETS): SocketBudget {
    if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) {
      throw new RangeError(`Dialer.socketBudget: maxConcurrent must be a positive integer, got ${maxConcurrent}`);
    }
    return new SocketBudget(Math.min(maxConcurrent, MAX_PER_REQUEST_SOCKETS));
  }
}

/** The dialer the server uses: policy from NETDIAG_ALLOW_TARGETS, DNS from NETDIAG_DNS_SERVERS. */
export function createDialer(
  config: Pick<Config, 'allowTargets' | 'dnsServers'>,
  overrides: Partial<DialerOptions> = {},
): Dialer {
  return new Dialer({
    ...overrides,
    policy: overrides.policy ?? new TargetPolicy(config.allowTargets),
    resolver: overrides.resolver ?? new DnsHostResolver(config.dnsServers),
  });
}
