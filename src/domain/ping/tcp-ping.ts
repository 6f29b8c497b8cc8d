import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { DialError, ResolveError, ValidationError } from '../../errors.js';
import { MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import { round2 } from '../../lib/round.js';
import type { CheckedAddress, Dialer } from '../dialer.js';
import {
  PING_DEFAULT_COUNT,
  PING_DEFAULT_PORT,
  PING_DEFAULT_TIMEOUT_S,
  PING_INTERVAL_MS,
  PING_MAX_COUNT,
  PING_MAX_TIMEOUT_S,
  PING_MIN_COUNT,
  PING_MIN_TIMEOUT_S,
} from './defaults.js';

/**
 * A TCP ping: `count` connects to one port, their handshake times reported the way `ping`
 * reports its echoes. A probe is received when the handshake completes; refused (RST), silent
 * (timeout) and unreachable probes are lost: a closed port answers, but not as the service
 * being pinged, and counting its resets would report 0 % loss for a port where nothing listens.
 */

/** What each probe met: the handshake completed, or why not. */
export type PingOutcome = 'connected' | 'refused' | 'timeout' | 'unreachable';

export interface TcpPingResult {
  /** The host as the caller wrote it (trimmed). */
  host: string;
  /** The one address every probe went to; null when the host did not resolve (nothing was sent). */
  ip: string | null;
  port: number;
  sent: number;
  received: number;
  /** (sent - received) / sent x 100, two decimals; 100 when nothing was sent. */
  loss_percent: number;
  /** Over the received probes, ms with two decimals; null when none was received. */
  min: number | null;
  avg: number | null;
  max: number | null;
  /** ping's mdev: sqrt(mean of squares - square of mean) over the received probes. */
  mdev: number | null;
  /** Each probe's handshake time in ms, or null when it was lost; in the order they were sent. */
  samples: Array<number | null>;
  /** Each probe's outcome, in the same order. */
  outcomes: PingOutcome[];
  /** Why nothing was sent (the host did not resolve), else null. */
  error: string | null;
}

export interface TcpPingOptions {
  port?: number;
  count?: number;
  /** Connect timeout of each probe, seconds. */
  timeout?: number;
  /** Stops the ping: probes not yet started never are, and the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

export type PingDialer = Pick<Dialer, 'resolve' | 'probe' | 'socketBudget'>;

const REFUSED = new Set(['ECONNREFUSED', 'ECONNRESET']);
const UNREACHABLE = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EACCES', 'EPERM']);

function checkInteger(field: string, value: number, min: number, max: number, unit = ''): void {
  if (!Number.isInteger(value) || value < min || value > max) throw new ValidationError(field, `must be between ${min} and ${max}${unit}`);
}

/** ping's summary line over the samples as reported (so a reader can redo the sums). */
export function pingStatistics(samples: ReadonlyArray<number | null>): Pick<TcpPingResult, 'sent' | 'received' | 'loss_percent' | 'min' | 'avg' | 'max' | 'mdev'> {
  const got = samples.filter((s): s is number => s !== null);
  const sent = samples.length;
  const received = got.length;
  const loss_percent = sent === 0 ? 100 : round2(((sent - received) * 100) / sent);
  if (received === 0) return { sent, received, loss_percent, min: null, avg: null, max: null, mdev: null };
  const sum = got.reduce((a, b) => a + b, 0);
  const sumSquares = got.reduce((a, b) => a + b * b, 0);
  const avg = sum / received;
  // iputils ping: tsum2/n - avg^2, clamped at 0 against rounding, then its square root.
  const mdev = Math.sqrt(Math.max(0, sumSquares / received - avg * avg));
  return { sent, received, loss_percent, min: Math.min(...got), avg: round2(avg), max: Math.max(...got), mdev: round2(mdev) };
}

export class TcpPinger {
  readonly #dialer: PingDialer;

  constructor(deps: { dialer: PingDialer }) {
    this.#dialer = deps.dialer;
  }

  /** Throws ValidationError (400) and TargetForbiddenError (403) before any connect. */
  async ping(host: string, opts: TcpPingOptions = {}): Promise<TcpPingResult> {
    const port = opts.port ?? PING_DEFAULT_PORT;
    const count = opts.count ?? PING_DEFAULT_COUNT;
    const timeout = opts.timeout ?? PING_DEFAULT_TIMEOUT_S;
    checkInteger('port', port, MIN_PORT, MAX_PORT);
    checkInteger('count', count, PING_MIN_COUNT, PING_MAX_COUNT);
    checkInteger('timeout', timeout, PING_MIN_TIMEOUT_S, PING_MAX_TIMEOUT_S, ' seconds');
    let target;
    try {
      target = await this.#dialer.resolve(host, { field: 'host' });
    } catch (err) {
      // A name that does not resolve is the diagnosis: a 200 saying so, with nothing sent.
      if (!(err instanceof ResolveError)) throw err;
      return { host: host.trim(), ip: null, port, ...pingStatistics([]), samples: [], outcomes: [], error: err.message };
    }
    // IPv4 first, as ping picks one address and sticks to it.
    const ip = target.addresses[0]!;
    const budget = this.#dialer.socketBudget(count);
    // Up to `count` probes listen to the signal at once: one of our own, so the caller's does
    // not collect them (and Node's leak warning past 10).
    const outer = opts.signal;
    const inner = outer ? new AbortController() : undefined;
    if (inner) setMaxListeners(0, inner.signal);
    const forward = (): void => inner?.abort(outer?.reason);
    if (outer?.aborted) forward();
    else outer?.addEventListener('abort', forward, { once: true });
    try {
      return await this.#pingAll(target.target, ip, port, count, timeout, budget, inner?.signal);
    } finally {
      outer?.removeEventListener('abort', forward);
    }
  }

  async #pingAll(
    host: string,
    ip: CheckedAddress,
    port: number,
    count: number,
    timeout: number,
    budget: ReturnType<PingDialer['socketBudget']>,
    signal: AbortSignal | undefined,
  ): Promise<TcpPingResult> {
    const probes: Array<Promise<{ sample: number | null; outcome: PingOutcome }>> = [];
    try {
      for (let i = 0; i < count; i++) {
        signal?.throwIfAborted();
        if (i > 0) await sleep(PING_INTERVAL_MS, undefined, signal ? { signal } : {});
        const probe = this.#probe(ip, port, timeout * 1000, budget, signal);
        // Settled later, in order; a rejection is not unhandled meanwhile.
        probe.catch(() => undefined);
        probes.push(probe);
      }
    } catch (err) {
      await Promise.allSettled(probes);
      throw signal?.aborted ? signal.reason : err;
    }
    const results = await Promise.all(probes);
    const samples = results.map((r) => r.sample);
    return { host, ip, port, ...pingStatistics(samples), samples, outcomes: results.map((r) => r.outcome), error: null };
  }

  async #probe(
    ip: CheckedAddress,
    port: number,
    timeoutMs: number,
    budget: ReturnType<PingDialer['socketBudget']>,
    signal: AbortSignal | undefined,
  ): Promise<{ sample: number | null; outcome: PingOutcome }> {
    let probed;
    try {
      probed = await this.#dialer.probe(ip, port, { timeoutMs, budget, ...(signal ? { signal } : {}) });
    } catch (err) {
      if (err instanceof DialError && err.code === 'ABORT_ERR') throw signal?.reason ?? err;
      throw err;
    }
    const { code, elapsedMs, selfConnect } = probed;
    if (code === null) return selfConnect ? { sample: null, outcome: 'refused' } : { sample: elapsedMs, outcome: 'connected' };
    if (REFUSED.has(code)) return { sample: null, outcome: 'refused' };
    if (code === 'ETIMEDOUT') return { sample: null, outcome: 'timeout' };
    if (UNREACHABLE.has(code)) return { sample: null, outcome: 'unreachable' };
    // EADDRNOTAVAIL and the like are this machine's trouble, not the target's: thrown, as in a scan
    // (the error handler answers EADDRNOTAVAIL 503, anything else 500).
    throw new DialError(code, ip, port, elapsedMs);
  }
}
