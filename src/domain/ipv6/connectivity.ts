import { DialError, ResolveError, ValidationError } from '../../errors.js';
import type { Dialer } from '../dialer.js';
import { MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import { IPV6_TEST_MAX_ADDRESSES, IPV6_TEST_PORTS, IPV6_TEST_TIMEOUT_MS } from './defaults.js';

export interface Ipv6TestResult {
  target: string;
  /** The target's IPv6 addresses (all of them passed the target policy). */
  addresses: string[];
  reachable: boolean;
  /** The address that answered, or null. */
  address: string | null;
  /** The port that answered; when nothing did, the requested port or null. */
  port: number | null;
  /** TCP connect time in ms (two decimals), or null. */
  response_time: number | null;
  /** Why it is not reachable; null when reachable. */
  error: string | null;
}

export interface Ipv6Deps {
  dialer: Pick<Dialer, 'resolve' | 'dial'>;
}

export interface Ipv6TestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

type Attempt = { ok: true; address: string; port: number; elapsedMs: number } | { ok: false; text: string };

/**
 * Resolves AAAA only and tries TCP on 443 then 80 (or `port`). Attempts run in parallel but
 * the first in order of preference that connects is the answer.
 * Throws ValidationError (bad target or port) and TargetForbiddenError; every other failure,
 * a name without AAAA included, is a result with `reachable: false`. When `signal` aborts, the
 * connects stop and its reason is thrown.
 */
export async function testConnectivity(
  deps: Ipv6Deps,
  target: string,
  port?: number,
  opts: Ipv6TestOptions = {},
): Promise<Ipv6TestResult> {
  if (port !== undefined && (!Number.isInteger(port) || port < MIN_PORT || port > MAX_PORT)) {
    throw new ValidationError('port', `must be an integer between ${MIN_PORT} and ${MAX_PORT}`);
  }
  const unreachable = (shown: string, addresses: string[], error: string): Ipv6TestResult => ({
    target: shown,
    addresses,
    reachable: false,
    address: null,
    port: port ?? null,
    response_time: null,
    error,
  });

  let resolved;
  try {
    resolved = await deps.dialer.resolve(target, { field: 'target', family: 6 });
  } catch (err) {
    if (err instanceof ResolveError) return unreachable(target.trim(), [], err.message);
    throw err;
  }

  const ports = port !== undefined ? [port] : IPV6_TEST_PORTS;
  const candidates = resolved.addresses.slice(0, IPV6_TEST_MAX_ADDRESSES);
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  const timeoutMs = opts.timeoutMs ?? IPV6_TEST_TIMEOUT_MS;

  // Port order first, then address order: "443 then 80" is the rule, addresses are alternatives.
  const attempts: Promise<Attempt>[] = ports.flatMap((p) =>
    candidates.map((address) =>
      deps.dialer.dial(address, p, { timeoutMs, signal }).then(
        ({ socket, elapsedMs }): Attempt => {
          // Connecting is the whole test; nothing is sent.
          socket.destroy();
          return { ok: true, address, port: p, elapsedMs };
        },
        (err: unknown): Attempt => {
          if (!(err instanceof DialError)) throw err;
          return { ok: false, text: `[${address}]:${p} ${err.reason}` };
        },
      ),
    ),
  );

  const failures: string[] = [];
  try {
    for (const attempt of attempts) {
      const a = await attempt;
      // Once the caller has given up, its reason is the outcome, not "unreachable".
      opts.signal?.throwIfAborted();
      if (a.ok) {
        return {
          target: resolved.target,
          addresses: resolved.addresses,
          reachable: true,
          address: a.address,
          port: a.port,
          response_time: a.elapsedMs,
          error: null,
        };
      }
      failures.push(a.text);
    }
  } finally {
    stop.abort();
    // The attempts still running end as aborted; nobody needs their outcome.
    for (const attempt of attempts) attempt.catch(() => undefined);
  }
  return unreachable(resolved.target, resolved.addresses, `no TCP answer over IPv6: ${failures.join('; ')}`);
}
