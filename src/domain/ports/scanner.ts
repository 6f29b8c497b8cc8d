import { setMaxListeners } from 'node:events';
import { describeDialError, DialError, ResolveError, ValidationError } from '../../errors.js';
import type { SocketBudget } from '../socket-budget.js';
import type { CheckedAddress, Dialer } from '../dialer.js';
import { MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import { MAX_PORTS_PER_SCAN, MAX_TIMEOUT_S, MIN_TIMEOUT_S } from './defaults.js';
import { serviceName } from './services.js';
import { asJob, parsePortSpec } from './port-spec.js';

/**
 * A TCP connect scan (nmap -sT) over the policy dialer: a port is `open` when the handshake
 * completes, `closed` when the host refuses it, `filtered` when nothing answers within the
 * timeout or the host is unreachable, `unresolved` when the host name did not resolve (no
 * packet was sent to any port).
 */

export type PortState = 'open' | 'closed' | 'filtered' | 'unresolved';

export interface PortResult {
  /** The host as the caller wrote it (trimmed). */
  host: string;
  /** The address every port was scanned on; null when the host did not resolve. */
  ip: string | null;
  port: number;
  open: boolean;
  state: PortState;
  /** IANA's service name for the port, or null. */
  service: string | null;
  /** ms (two decimals) from the connect to its answer, or to the timeout; null when nothing was sent. */
  response_time: number | null;
  /**
   * ms (two decimals) this port waited for a connection slot before its connect (this scan's
   * own parallelism and the dialer's budget shared with every request); null when nothing was sent.
   */
  queued_ms: number | null;
  /** Why the state: `connected`, `connection refused`, `no answer within 3 s`, `host unreachable`, a DNS failure, … */
  reason: string;
  /** When `unresolved`, the DNS answer: `NXDOMAIN`, `NODATA`, `TIMEOUT`, `SERVFAIL`, `REFUSED`, `UNREACHABLE` or `ERROR`; else null. */
  error: string | null;
}

export interface ScanOptions {
  /** Connect timeout per port. */
  timeoutMs: number;
  /** Ends the scan early: queued ports are never dialled and the scan rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Told each port's result as it completes, with its position in the sorted result (jobs stream these). */
  onItem?: (index: number, result: PortResult) => void;
  /** The most ports the scan takes: MAX_PORTS_PER_SCAN (a synchronous call) unless given. */
  maxPorts?: number;
  /** Positions (in the sorted ports) not to probe nor report: a job run again skips what it stored. */
  skip?: { has(index: number): boolean } | undefined;
}

/** What scanPortsEach tells of a scan whose results it did not keep. */
export interface ScanTally {
  ports: number;
  /** The result of the lowest port: its host and address, or why the host did not resolve. */
  first: PortResult | null;
  open: number;
  closed: number;
  filtered: number;
  unresolved: number;
}

export type ScanDialer = Pick<Dialer, 'resolve' | 'probe' | 'socketBudget'>;

export interface PortScannerOptions {
  /** The scan's socket budget: connects it keeps open at once; default the most the dialer lets one request hold. */
  maxSockets?: number;
}

const REFUSED = new Set(['ECONNREFUSED', 'ECONNRESET']);

/** The DNS answer a failed lookup got, in the words of the DNS tool's `status` (docs/ports.md). */
const DNS_ANSWERS: Record<ResolveError['code'], string> = {
  ENOTFOUND: 'NXDOMAIN',
  // The name exists, with no address record: NOERROR with an empty answer.
  ENODATA: 'NODATA',
  ETIMEOUT: 'TIMEOUT',
  ESERVFAIL: 'SERVFAIL',
  EREFUSED: 'REFUSED',
  EDNS: 'ERROR',
};

function dnsAnswer(err: ResolveError): string {
  // A server that could not be reached at all (ICMP port unreachable) is what the DNS tool calls UNREACHABLE.
  if (err.code === 'EDNS' && (err.cause as { code?: unknown } | undefined)?.code === 'ECONNREFUSED') return 'UNREACHABLE';
  return DNS_ANSWERS[err.code];
}
/** No answer, or an answer that says the port cannot be reached: nmap calls all of these filtered. */
const FILTERED = new Set(['ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EACCES', 'EPERM']);

/**
 * Validates `ports` and returns them without duplicates, in ascending order: at most `max`,
 * MAX_PORTS_PER_SCAN for a synchronous call, MAX_PORTS_PER_JOB for a job.
 */
export function normalizePorts(ports: readonly number[] | string, field = 'ports', max = MAX_PORTS_PER_SCAN): number[] {
  if (typeof ports === 'string') return parsePortSpec(ports, field, max);
  if (!Array.isArray(ports)) throw new ValidationError(field, 'must be an array');
  if (ports.length === 0) throw new ValidationError(field, 'at least 1 entry');
  if (ports.length > max) throw new ValidationError(field, `at most ${max} entries${asJob(max)}`);
  ports.forEach((port, i) => {
    if (!Number.isInteger(port) || port < MIN_PORT || port > MAX_PORT) {
      throw new ValidationError(`${field}[${i}]`, `must be an integer between ${MIN_PORT} and ${MAX_PORT}`);
    }
  });
  return [...new Set(ports)].sort((a, b) => a - b);
}

function portResult(
  host: string,
  ip: string | null,
  port: number,
  state: PortState,
  response_time: number | null,
  reason: string,
  queued_ms: number | null = null,
  error: string | null = null,
): PortResult {
  return { host, ip, port, open: state === 'open', state, service: serviceName(port), response_time, queued_ms, reason, error };
}

function checkTimeout(timeoutMs: number): void {
  if (!Number.isFinite(timeoutMs) || timeoutMs < MIN_TIMEOUT_S * 1000 || timeoutMs > MAX_TIMEOUT_S * 1000) {
    throw new ValidationError('timeout', `must be ${MIN_TIMEOUT_S}-${MAX_TIMEOUT_S} seconds`);
  }
}

/**
 * Each scan resolves its host once and dials only that checked address. Its sockets come out
 * of the dialer's one budget: this scan's cap (`dialer.socketBudget()`), and the share of the
 * account whose request runs it (the dialer takes the owner from `runAsOwner`, set by the
 * work-in-flight check of the probe routes).
 */
export class PortScanner {
  readonly #dialer: ScanDialer;
  readonly #maxSockets: number | undefined;

  constructor(deps: { dialer: ScanDialer }, opts: PortScannerOptions = {}) {
    this.#dialer = deps.dialer;
    this.#maxSockets = opts.maxSockets;
  }

  /** One port (POST /port/scan). Throws ValidationError (400) and TargetForbiddenError (403). */
  async scanPort(host: string, port: number, opts: ScanOptions): Promise<PortResult> {
    if (!Number.isInteger(port) || port < MIN_PORT || port > MAX_PORT) {
      throw new ValidationError('port', `must be an integer between ${MIN_PORT} and ${MAX_PORT}`);
    }
    let result: PortResult | undefined;
    await this.#scan(host, [port], opts, (_i, r) => (result = r));
    return result!;
  }

  /**
   * Many ports, concurrently; one result per distinct port, sorted by port.
   * Throws ValidationError (400) and TargetForbiddenError (403) before any connect.
   */
  async scanPorts(host: string, ports: readonly number[] | string, opts: ScanOptions): Promise<PortResult[]> {
    const list = normalizePorts(ports, 'ports', opts.maxPorts);
    const results = new Array<PortResult>(list.length);
    const onItem = opts.onItem;
    await this.#scan(host, list, opts, (i, r) => {
      results[i] = r;
      onItem?.(i, r);
    });
    return results;
  }

  /**
   * scanPorts for a job's range (up to every port): each result goes to `onItem` as it completes
   * and is kept nowhere here, so a 65535-port scan holds only the ports in flight. Returns the
   * count of each state and the first result (its host and address, or why it did not resolve).
   */
  async scanPortsEach(host: string, ports: readonly number[] | string, opts: ScanOptions & { onItem: (index: number, result: PortResult) => void }): Promise<ScanTally> {
    const list = normalizePorts(ports, 'ports', opts.maxPorts);
    const tally = emptyTally(list.length);
    const onItem = opts.onItem;
    await this.#scan(host, list, opts, (i, r) => {
      countIn(tally, i, r);
      onItem(i, r);
    });
    return tally;
  }

  /** Probes `ports` (validated, sorted) on the host's one address, telling `each` every result as it completes. */
  async #scan(host: string, ports: readonly number[], opts: ScanOptions, each: (index: number, result: PortResult) => void): Promise<void> {
    checkTimeout(opts.timeoutMs);
    let target;
    try {
      target = await this.#dialer.resolve(host, { field: 'host' });
    } catch (err) {
      // A name that does not resolve is the diagnosis, not a bad request: every port answers so,
      // and none is `filtered`, since no packet was sent.
      if (!(err instanceof ResolveError)) throw err;
      const shown = host.trim();
      const answer = dnsAnswer(err);
      for (let i = 0; i < ports.length; i++) if (!opts.skip?.has(i)) each(i, portResult(shown, null, ports[i]!, 'unresolved', null, err.message, null, answer));
      return;
    }
    // IPv4 first, like nmap: one address per scan, so every port describes the same machine.
    const ip = target.addresses[0]!;
    const perScan = this.#maxSockets === undefined ? this.#dialer.socketBudget() : this.#dialer.socketBudget(this.#maxSockets);
    // As many workers as the scan may hold sockets, each taking the next port when its last one
    // answered: the ports waiting for a socket are an index, not a promise and a closure each
    // (65535 of them held a job's full-range scan at some 60 MB). A failure stops them all.
    let next = 0;
    let failed = false;
    const skip = opts.skip;
    const run = async (o: ScanOptions): Promise<void> => {
      try {
        while (next < ports.length && !failed) {
          const i = next++;
          if (skip?.has(i)) continue;
          each(i, await this.#probe(target.target, ip, ports[i]!, perScan, o));
        }
      } catch (err) {
        failed = true;
        throw err;
      }
    };
    const workers = Math.min(ports.length, perScan.capacity);
    // Without a caller's signal, none at all: an abort listener per dial costs a loopback scan.
    const outer = opts.signal;
    if (!outer) {
      await Promise.all(Array.from({ length: workers }, () => run(opts)));
      return;
    }

    // With one, each worker listens to a signal of its own, which the caller's aborts through
    // one of ours: a dial adds and removes its listener on a signal that has no other (Node's
    // EventTarget walks a signal's listeners on each add; with every dial on one signal, the
    // 512 in flight cost a 65535-port scan most of a second), and the caller's does not collect
    // hundreds of listeners (and Node's leak warning) per scan.
    const inner = new AbortController();
    setMaxListeners(0, inner.signal);
    const forward = (): void => inner.abort(outer.reason);
    if (outer.aborted) forward();
    else outer.addEventListener('abort', forward, { once: true });
    const own = (): ScanOptions => {
      const mine = new AbortController();
      if (inner.signal.aborted) mine.abort(inner.signal.reason);
      else inner.signal.addEventListener('abort', () => mine.abort(inner.signal.reason), { once: true });
      return { ...opts, signal: mine.signal };
    };
    try {
      await Promise.all(Array.from({ length: workers }, () => run(own())));
    } finally {
      outer.removeEventListener('abort', forward);
    }
  }

  async #probe(host: string, ip: CheckedAddress, port: number, perScan: SocketBudget, opts: ScanOptions): Promise<PortResult> {
    const { signal, timeoutMs } = opts;
    let probed;
    try {
      probed = await this.#dialer.probe(ip, port, { timeoutMs, signal, budget: perScan });
    } catch (err) {
      if (err instanceof DialError && err.code === 'ABORT_ERR') throw signal?.reason ?? err;
      throw err;
    }
    const { code, elapsedMs, selfConnect, queuedMs } = probed;
    const result = (state: PortState, reason: string): PortResult => portResult(host, ip, port, state, elapsedMs, reason, queuedMs);
    if (code === null) return selfConnect ? result('closed', 'connection refused (nothing listening)') : result('open', 'connected');
    if (REFUSED.has(code)) return result('closed', describeDialError(code));
    if (code === 'ETIMEDOUT') return result('filtered', `no answer within ${timeoutMs / 1000} s`);
    if (FILTERED.has(code)) return result('filtered', describeDialError(code));
    // EADDRNOTAVAIL and unknown failures are this machine's trouble, not the port's state:
    // a 500 the operator sees beats a port silently reported wrong.
    throw new DialError(code, ip, port, elapsedMs);
  }
}

function emptyTally(ports: number): ScanTally {
  return { ports, first: null, open: 0, closed: 0, filtered: 0, unresolved: 0 };
}

function countIn(tally: ScanTally, index: number, result: PortResult): void {
  tally[result.state]++;
  if (index === 0) tally.first = result;
}

/** The ScanTally of results a scan kept (scanPorts), as scanPortsEach counts them. */
export function tallyOf(results: readonly PortResult[]): ScanTally {
  const tally = emptyTally(results.length);
  results.forEach((r, i) => countIn(tally, i, r));
  return tally;
}
