import type net from 'node:net';
import type { SocketBudget } from './socket-budget.js';
import type { DialErrorCode } from '../errors.js';

/**
 * What the domain needs from THE one dialer (the target policy and the socket budget live in its
 * implementation): every outbound probe (port scan, proxy check, WHOIS, IPv6 test) resolves its
 * target through `resolve`, which checks every address against the policy, and connects only to
 * the `CheckedAddress`es it returned. The errors it rejects with (DialError, ResolveError, in
 * src/errors.ts) let callers tell a refused port or a name that does not resolve (a 200 result)
 * from a bug.
 */

/** An address that passed the policy. Only the dialer makes these (branded type). */
export type CheckedAddress = string & { readonly __checked: unique symbol };

export interface ResolvedTarget {
  /** The target as the user wrote it (trimmed). */
  target: string;
  /** Lowercase A-label hostname, or null when the target was an address. */
  hostname: string | null;
  /** Every address checked; IPv4 first unless `prefer: 6`. Never empty. */
  addresses: CheckedAddress[];
}

export interface ResolveOptions {
  /** Field named in a ValidationError; default 'target'. */
  field?: string;
  /** 4 or 6 to resolve (and accept) only that family; 0 (default) for both. */
  family?: 0 | 4 | 6;
  /** Which family comes first in `addresses`; default 4. */
  prefer?: 4 | 6;
}

export interface ConnectOptions {
  /** Connect timeout, counted from the moment the socket is created (not while queued). */
  timeoutMs: number;
  /** Aborts a queued or in-progress connect. */
  signal?: AbortSignal;
  /** A per-request cap from `dialer.socketBudget(n)`. */
  budget?: SocketBudget;
  /** Whose dial this is (an account key), for the fair share of the global budget; default: currentOwner(). */
  owner?: string;
}

export interface DialResult {
  socket: net.Socket;
  /** Time from socket creation to connected, in ms with two decimals. */
  elapsedMs: number;
  /** Time waiting for a socket slot before that, in ms with two decimals. */
  queuedMs: number;
}

export type ProbeCode = Exclude<DialErrorCode, 'ABORT_ERR'>;

export interface ProbeResult {
  /** null when the handshake completed; otherwise why not (an abort rejects instead). */
  code: ProbeCode | null;
  /** From the connect to its answer or the timeout, ms with two decimals. */
  elapsedMs: number;
  /**
   * Connected to itself: connecting from port P to the same address's port P is a TCP
   * "simultaneous open" that succeeds when nothing listens there and the kernel happened to
   * pick P as the ephemeral port. Loopback scans hit it now and then; the port is closed.
   */
  selfConnect: boolean;
  /** Time waiting for a socket slot before the connect, ms with two decimals. */
  queuedMs: number;
}

/** The dialer as its callers see it; its contract is spelled out where it is implemented. */
export interface Dialer {
  /** Parses, resolves and checks a user's target: ValidationError, TargetForbiddenError or ResolveError. */
  resolve(target: string, opts?: ResolveOptions): Promise<ResolvedTarget>;
  /** Opens TCP to a checked address: a connected socket, or DialError. */
  connect(address: CheckedAddress, port: number, opts: ConnectOptions): Promise<net.Socket>;
  /** Like connect, with the connect time. */
  dial(address: CheckedAddress, port: number, opts: ConnectOptions): Promise<DialResult>;
  /** Whether a TCP handshake completes, closing at once (port scans). */
  probe(address: CheckedAddress, port: number, opts: ConnectOptions): Promise<ProbeResult>;
  /** A per-request cap within the one socket budget; without a number, the most one request may hold (a port scan). */
  socketBudget(maxConcurrent?: number): SocketBudget;
}
