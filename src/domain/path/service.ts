import ipaddr from 'ipaddr.js';
import { PathToolError, PathToolUnavailableError, ResolveError, TargetForbiddenError, ValidationError } from '../../errors.js';
import { round2, round3 } from '../../lib/round.js';
import { MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import { parseIpStrict } from '../../net/ip-text.js';
import { classifyAddress } from '../../net/ranges.js';
import type { CheckedAddress, Dialer } from '../dialer.js';
import type { ReversePolicy } from '../dns/lookup.js';
import { reverseName } from '../dns/names.js';
import { lookupPtr } from '../ip/dns-checks.js';
import type { GeoReader } from '../ip/geoip.js';
import type { DnsQuerier } from '../ip/types.js';
import { currentOwner } from '../owner.js';
import type { SocketBudget } from '../socket-budget.js';
import {
  HOP_PTR_DEADLINE_MS,
  MTR_DEFAULT_PACKETS,
  MTR_MAX_PACKETS,
  MTR_MIN_PACKETS,
  PATH_DEFAULT_MAX_HOPS,
  PATH_DEFAULT_PROTOCOL,
  PATH_DEFAULT_TCP_PORT,
  PATH_DEFAULT_UDP_PORT,
  PATH_MAX_MAX_HOPS,
  PATH_MIN_MAX_HOPS,
  PATH_PROTOCOLS,
  PING_DEFAULT_PACKETS,
  PING_MAX_PACKETS,
  PING_MIN_PACKETS,
  TRACEROUTE_DEFAULT_QUERIES,
  TRACEROUTE_MAX_QUERIES,
  TRACEROUTE_MIN_QUERIES,
} from './defaults.js';
import type {
  HopIdentity,
  IcmpPingResult,
  MtrHop,
  MtrHopLine,
  MtrResult,
  PathProtocol,
  PathToolName,
  PathToolRunner,
  PathToolsAvailability,
  PingSample,
  TraceHopLine,
  TracerouteHop,
  TracerouteResult,
} from './types.js';

/**
 * ICMP ping, traceroute and mtr (docs/path-tools.md). The target is resolved and checked by the
 * target policy like every probe's, and the program is handed only the checked address, so
 * nothing reaches a forbidden address and a rebinding name cannot slip past. Hops are whoever
 * answered: reported, never contacted; each one's name is its PTR through netdiag's own resolver
 * (only where the target policy would let a caller ask for it), its AS from the local data.
 */

export interface IcmpPingOptions {
  /** Echo requests, 1-16; default 4. */
  packets?: number | undefined;
  /** 4 or 6: resolve (and accept) only that family; default the first address the name resolves to (IPv4 first). */
  ip_version?: 4 | 6 | undefined;
}

export interface TracerouteOptions {
  protocol?: PathProtocol | undefined;
  /** Destination port of udp and tcp probes; default 33434 (udp) or 80 (tcp). */
  port?: number | undefined;
  max_hops?: number | undefined;
  /** Probes per TTL, 1-3; default 3. */
  queries?: number | undefined;
  ip_version?: 4 | 6 | undefined;
}

export interface MtrOptions {
  protocol?: PathProtocol | undefined;
  port?: number | undefined;
  /** Probes per hop, 1-16; default 10. */
  packets?: number | undefined;
  max_hops?: number | undefined;
  ip_version?: 4 | 6 | undefined;
}

export interface PathCallContext<Item> {
  /** Kills the program (and the call rejects with the signal's reason) when the client goes away or the job is cancelled. */
  signal?: AbortSignal | undefined;
  /** Each sample or hop as it is known, with its place in `samples` or `hops`; each place is told once. */
  onItem?: ((index: number, item: Item) => void) | undefined;
  /** Whose call this is, for the fair share of the process budget; default currentOwner(). */
  owner?: string | undefined;
}

export interface PathToolsDeps {
  /** Resolves and checks the target (the target policy); nothing else is asked of it. */
  dialer: Pick<Dialer, 'resolve'>;
  runner: PathToolRunner;
  /** The one process budget of this server, shared fairly between owners (PATH_MAX_PROCESSES). */
  processes: SocketBudget;
  /** netdiag's own resolver, for the hops' PTR; without it every hostname is null. */
  dns?: DnsQuerier | null | undefined;
  /** The local GeoIP data, for the hops' AS; without it asn and network are null. */
  geo?: Pick<GeoReader, 'asn'> | null | undefined;
  /**
   * Whether a hop's PTR may be asked: the target policy, as for every reverse lookup (the
   * operator's resolver names its own network's routers; src/domain/dns/lookup.ts). Without it,
   * public addresses only, as /ip/lookup.
   */
  policy?: ReversePolicy | undefined;
  ptrDeadlineMs?: number | undefined;
}

type Identity = Omit<HopIdentity, 'ttl' | 'address'>;
type Identify = (address: string | null) => Promise<Identity>;

type Resolved = { target: string; address: CheckedAddress; family: 4 | 6 } | { target: string; error: string };

function checkInteger(field: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) throw new ValidationError(field, `must be an integer between ${min} and ${max}`);
}

function checkIpVersion(value: unknown): void {
  if (value !== undefined && value !== 4 && value !== 6) throw new ValidationError('ip_version', 'must be 4 or 6');
}

function checkProtocol(value: unknown): PathProtocol {
  if (value === undefined) return PATH_DEFAULT_PROTOCOL;
  if (typeof value !== 'string' || !(PATH_PROTOCOLS as readonly string[]).includes(value)) {
    throw new ValidationError('protocol', `must be one of ${PATH_PROTOCOLS.join(', ')}`);
  }
  return value as PathProtocol;
}

function checkPort(protocol: PathProtocol, port: number | undefined): number {
  const value = port ?? (protocol === 'tcp' ? PATH_DEFAULT_TCP_PORT : PATH_DEFAULT_UDP_PORT);
  checkInteger('port', value, MIN_PORT, MAX_PORT);
  return value;
}

/** An address as every result spells it (RFC 5952 for IPv6), so a hop compares equal to the target. */
function canonical(address: string): string {
  return parseIpStrict(address)?.toString() ?? address;
}

function isPublic(address: string): boolean {
  const addr = parseIpStrict(address);
  return addr !== null && classifyAddress(addr).type === 'public';
}

/**
 * ping's statistics over the first reply to each answered request, three decimals like its
 * summary line: a reader can redo them from `samples`. (ping's own line also averages in the
 * duplicates it printed; those are not samples here.)
 */
export function icmpPingStatistics(samples: ReadonlyArray<PingSample | null>): Pick<IcmpPingResult, 'sent' | 'received' | 'loss_percent' | 'min' | 'avg' | 'max' | 'mdev'> {
  const rtts = samples.filter((s): s is PingSample => s !== null).map((s) => s.rtt);
  const sent = samples.length;
  const received = rtts.length;
  const loss_percent = sent === 0 ? 100 : round2(((sent - received) * 100) / sent);
  if (received === 0) return { sent, received, loss_percent, min: null, avg: null, max: null, mdev: null };
  const avg = rtts.reduce((a, b) => a + b, 0) / received;
  const meanSquare = rtts.reduce((a, b) => a + b * b, 0) / received;
  // iputils: tsum2/n - avg^2, clamped at 0 against rounding, then its square root.
  const mdev = Math.sqrt(Math.max(0, meanSquare - avg * avg));
  return { sent, received, loss_percent, min: Math.min(...rtts), avg: round3(avg), max: Math.max(...rtts), mdev: round3(mdev) };
}

export class PathTools {
  readonly #d: PathToolsDeps;
  #known: PathToolsAvailability | null = null;

  constructor(deps: PathToolsDeps) {
    this.#d = deps;
  }

  /** Which tools this server can run, and what is missing where one cannot (for /readyz). */
  availability(): Promise<PathToolsAvailability> {
    const report = this.#d.runner.availability();
    report.then((r) => (this.#known = r), () => undefined);
    return report;
  }

  /**
   * The last availability report that came in, without waiting (/readyz answers at once); null
   * until the first check, which this starts, has come in.
   */
  knownAvailability(): PathToolsAvailability | null {
    void this.availability();
    return this.#known;
  }

  /**
   * What a call would refuse before running anything, for a job before its 202: a bound
   * (ValidationError, 400), a missing tool or privilege (PathToolUnavailableError, 503), a
   * forbidden target (TargetForbiddenError, 403). A name that does not resolve passes: the call
   * answers it as its result.
   */
  async precheck(tool: PathToolName, target: string, opts: IcmpPingOptions & TracerouteOptions & MtrOptions = {}): Promise<void> {
    const protocol = tool === 'ping' ? 'icmp' : this.#validate(tool, opts).protocol;
    await this.#ensureAvailable(tool, protocol);
    await this.#resolve(target, opts.ip_version);
  }

  /** ICMP echo requests spaced 200 ms apart; each reply is an item (`onItem(seq - 1, sample)`) as it arrives, the lost ones at the end. */
  async ping(target: string, opts: IcmpPingOptions = {}, ctx: PathCallContext<PingSample | null> = {}): Promise<IcmpPingResult> {
    const packets = opts.packets ?? PING_DEFAULT_PACKETS;
    checkInteger('packets', packets, PING_MIN_PACKETS, PING_MAX_PACKETS);
    checkIpVersion(opts.ip_version);
    await this.#ensureAvailable('ping', 'icmp');
    const resolved = await this.#resolve(target, opts.ip_version);
    const empty = (address: string | null, error: string): IcmpPingResult => ({
      target: resolved.target,
      address,
      protocol: 'icmp',
      ...icmpPingStatistics([]),
      samples: [],
      error,
    });
    if ('error' in resolved) return empty(null, resolved.error);
    const { address, family } = resolved;
    const got = new Array<PingSample | null>(packets).fill(null);
    let run;
    try {
      run = await this.#withProcess(ctx, (signal) =>
        this.#d.runner.ping({ address, family, packets }, {
          signal,
          onReply: (reply) => {
            // A duplicate, or a reply to a request this call did not send, is no sample.
            if (reply.duplicate || reply.seq < 1 || reply.seq > packets || got[reply.seq - 1] !== null) return;
            const sample: PingSample = { seq: reply.seq, ttl: reply.ttl, rtt: reply.rtt };
            got[reply.seq - 1] = sample;
            ctx.onItem?.(reply.seq - 1, sample);
          },
        }),
      );
    } catch (err) {
      if (err instanceof PathToolError && err.kind === 'no_route') return empty(address, err.reason);
      throw err;
    }
    const sent = Math.min(packets, run.transmitted ?? packets);
    const samples = got.slice(0, sent);
    samples.forEach((s, i) => s === null && ctx.onItem?.(i, null));
    return { target: resolved.target, address, protocol: 'icmp', ...icmpPingStatistics(samples), samples, error: null };
  }

  /** One hop per TTL up to the target or max_hops; each hop is an item (`onItem(ttl - 1, hop)`) once traceroute printed it and its name is known. */
  async traceroute(target: string, opts: TracerouteOptions = {}, ctx: PathCallContext<TracerouteHop> = {}): Promise<TracerouteResult> {
    const { protocol, port, maxHops } = this.#validate('traceroute', opts);
    const queries = opts.queries ?? TRACEROUTE_DEFAULT_QUERIES;
    checkInteger('queries', queries, TRACEROUTE_MIN_QUERIES, TRACEROUTE_MAX_QUERIES);
    await this.#ensureAvailable('traceroute', protocol);
    const resolved = await this.#resolve(target, opts.ip_version);
    if ('error' in resolved) return { target: resolved.target, address: null, protocol, reached: false, hops: [], error: resolved.error };
    const { address, family } = resolved;
    const identify = this.#identifier();
    const hops: Array<Promise<TracerouteHop>> = [];
    const targetAddress = canonical(address);
    let reached = false;
    const onHop = (line: TraceHopLine): void => {
      if (line.probes.some((p) => p !== null && canonical(p.address) === targetAddress)) reached = true;
      const hop = this.#traceHop(line, identify);
      hop.then((h) => ctx.onItem?.(h.ttl - 1, h), () => undefined);
      hops.push(hop);
    };
    let error: string | null = null;
    try {
      const run = await this.#withProcess(ctx, (signal) =>
        this.#d.runner.traceroute({ address, family, protocol, port, maxHops, queries }, { signal, onHop }),
      );
      error = run.unfinished;
    } catch (err) {
      await Promise.allSettled(hops);
      if (err instanceof PathToolError && err.kind === 'no_route') {
        return { target: resolved.target, address, protocol, reached: false, hops: [], error: err.reason };
      }
      throw err;
    }
    const done = await Promise.all(hops);
    return { target: resolved.target, address, protocol, reached, hops: done, error };
  }

  /** mtr's report: one hop per TTL it probed, with its loss and times; the hops are items once the report is in. */
  async mtr(target: string, opts: MtrOptions = {}, ctx: PathCallContext<MtrHop> = {}): Promise<MtrResult> {
    const { protocol, port, maxHops } = this.#validate('mtr', opts);
    const packets = opts.packets ?? MTR_DEFAULT_PACKETS;
    checkInteger('packets', packets, MTR_MIN_PACKETS, MTR_MAX_PACKETS);
    await this.#ensureAvailable('mtr', protocol);
    const resolved = await this.#resolve(target, opts.ip_version);
    if ('error' in resolved) return { target: resolved.target, address: null, protocol, hops: [], error: resolved.error };
    const { address, family } = resolved;
    let run;
    try {
      run = await this.#withProcess(ctx, (signal) => this.#d.runner.mtr({ address, family, protocol, port, maxHops, packets }, { signal }));
    } catch (err) {
      if (err instanceof PathToolError && err.kind === 'no_route') return { target: resolved.target, address, protocol, hops: [], error: err.reason };
      throw err;
    }
    const identify = this.#identifier();
    const hops = await Promise.all(
      run.hops.map(async (line) => {
        const hop = await this.#mtrHop(line, identify);
        ctx.onItem?.(hop.ttl - 1, hop);
        return hop;
      }),
    );
    return { target: resolved.target, address, protocol, hops, error: null };
  }

  #validate(tool: 'traceroute' | 'mtr', opts: TracerouteOptions & MtrOptions): { protocol: PathProtocol; port: number; maxHops: number } {
    const protocol = checkProtocol(opts.protocol);
    const port = checkPort(protocol, opts.port);
    const maxHops = opts.max_hops ?? PATH_DEFAULT_MAX_HOPS;
    checkInteger('max_hops', maxHops, PATH_MIN_MAX_HOPS, PATH_MAX_MAX_HOPS);
    checkIpVersion(opts.ip_version);
    if (tool === 'traceroute' && opts.queries !== undefined) checkInteger('queries', opts.queries, TRACEROUTE_MIN_QUERIES, TRACEROUTE_MAX_QUERIES);
    if (tool === 'mtr' && opts.packets !== undefined) checkInteger('packets', opts.packets, MTR_MIN_PACKETS, MTR_MAX_PACKETS);
    return { protocol, port, maxHops };
  }

  async #ensureAvailable(tool: PathToolName, protocol: PathProtocol): Promise<void> {
    const report = await this.#d.runner.availability();
    if (tool === 'traceroute') {
      const t = report.traceroute;
      if (t.protocols.includes(protocol)) return;
      throw new PathToolUnavailableError(`traceroute over ${protocol}`, t.reason ?? 'it cannot probe with this protocol here');
    }
    const a = report[tool];
    if (!a.available) throw new PathToolUnavailableError(tool, a.reason ?? 'it cannot run here');
  }

  /** The checked address the program is given (the first, IPv4 first unless ip_version says), or why there is none. */
  async #resolve(target: string, ipVersion: 4 | 6 | undefined): Promise<Resolved> {
    try {
      const r = await this.#d.dialer.resolve(target, { field: 'target', family: ipVersion ?? 0 });
      const address = r.addresses[0]!;
      return { target: r.target, address, family: address.includes(':') ? 6 : 4 };
    } catch (err) {
      // A name that does not resolve is the diagnosis: a 200 saying so, with nothing sent.
      if (!(err instanceof ResolveError)) throw err;
      return { target: target.trim(), error: err.message };
    }
  }

  /** Runs `work` holding one of the process budget's slots, taken in the owner's fair turn. */
  async #withProcess<T>(ctx: Pick<PathCallContext<never>, 'signal' | 'owner'>, work: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
    const release = await this.#d.processes.acquire(ctx.signal, ctx.owner ?? currentOwner());
    try {
      return await work(ctx.signal);
    } finally {
      release();
    }
  }

  /** A hop's name and AS, each address asked once per call. */
  #identifier(): Identify {
    const known = new Map<string, Promise<Identity>>();
    return (address) => {
      if (address === null) return Promise.resolve({ hostname: null, asn: null, organization: null, network: null });
      let found = known.get(address);
      if (!found) {
        found = this.#identify(address);
        known.set(address, found);
      }
      return found;
    };
  }

  async #identify(address: string): Promise<Identity> {
    // Private space has no AS in public data; the local reader is not even asked.
    const asn = isPublic(address) ? (this.#d.geo?.asn(address) ?? null) : null;
    const dns = this.#d.dns ?? null;
    let hostname: string | null = null;
    if (dns !== null && this.#mayAskReverse(address)) {
      hostname = await lookupPtr(dns, ipaddr.parse(address), this.#d.ptrDeadlineMs ?? HOP_PTR_DEADLINE_MS).catch(() => null);
    }
    return { hostname, asn: asn?.number ?? null, organization: asn?.organization ?? null, network: asn?.network ?? null };
  }

  #mayAskReverse(address: string): boolean {
    const policy = this.#d.policy;
    if (!policy) return isPublic(address);
    const addr = ipaddr.parse(address);
    try {
      policy.checkReverse(reverseName(addr), addr, addr.kind() === 'ipv4' ? 32 : 128);
      return true;
    } catch (err) {
      if (err instanceof TargetForbiddenError) return false;
      throw err;
    }
  }

  async #traceHop(line: TraceHopLine, identify: Identify): Promise<TracerouteHop> {
    const first = line.probes.find((p) => p !== null) ?? null;
    const address = first === null ? null : canonical(first.address);
    const who = await identify(address);
    return { ttl: line.ttl, address, ...who, rtts: line.probes.map((p) => (p === null ? null : p.rtt)) };
  }

  async #mtrHop(line: MtrHopLine, identify: Identify): Promise<MtrHop> {
    const address = line.address === null ? null : canonical(line.address);
    const who = await identify(address);
    const none = line.received === 0;
    return {
      ttl: line.ttl,
      address,
      ...who,
      sent: line.sent,
      received: line.received,
      loss_percent: line.sent === 0 ? 100 : round2(((line.sent - line.received) * 100) / line.sent),
      last: none ? null : line.last,
      best: none ? null : line.best,
      avg: none ? null : line.avg,
      worst: none ? null : line.worst,
      stdev: none ? null : line.stdev,
    };
  }
}
