import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { CHECK_USER_AGENT, MAX_ECHO_BYTES } from './defaults.js';
import { exchange } from './exchange.js';
import { parseEcho, type JudgeTarget } from './judge-client.js';
import { dialProxy, FAIL_RANK, httpRefusal, openTunnel, proxyAuthorization, tlsHandshake, type ProxyEndpoint } from './tunnel.js';
import { PROTOCOL_PREFERENCE, type JudgeEcho, type ProxyProtocol } from './types.js';
import { round2 } from '../../lib/round.js';
import { ExchangeError, type ProxyFailKind, ProxyStepError } from '../../errors.js';

/**
 * Protocol detection: each candidate protocol asks the judge, through the proxy, for a nonce of
 * its own; it works when the judge's signed echo comes back. Candidates run in parallel, and the
 * first in the order of preference that works is the answer (a better one still running is
 * waited for; worse ones are cancelled). The echo of the winner is what anonymity is judged from,
 * and its nonce is the one the speed test goes on with. A nonce per try, because each use of a
 * nonce works once: with one shared nonce, a less preferred try that reached the judge first
 * would spend the echo the preferred one needs.
 */

/** Where each protocol try gets its nonce, and the key the judge's answers are checked with. */
export interface JudgeTickets {
  key: Buffer;
  issue: () => Promise<string>;
}

export interface Timeouts {
  /** Head start of each protocol try over the next (PROXY_TRY_HEAD_START_MS). */
  headStartMs: number;
  connectMs: number;
  protocolMs: number;
  sslMs: number;
  speedMs: number;
}

/** An open way to the judge through the proxy (the proxy socket, or a tunnel on it). */
export interface JudgeLink {
  socket: import('node:net').Socket;
  channel: Duplex;
  path: (nonce: string, suffix?: string) => string;
  extraHeaders: Record<string, string>;
}

/** Closes a link nobody goes on with. */
export function dropLink(link: JudgeLink | null | undefined): void {
  link?.channel.destroy();
  link?.socket.destroy();
}

export interface Detected {
  ok: true;
  protocol: ProxyProtocol;
  echo: JudgeEcho;
  /** The nonce this try used: its download and upload are still unspent. */
  nonce: string;
  /** ms: connect + handshake + the judge's answer. */
  responseTime: number;
  /** Our side of the connection to the proxy (an address of ours the proxy saw). */
  localAddress: string | null;
  /** The try's way to the judge, kept open when asked (`keep`): the speed test goes on over it. */
  link?: JudgeLink;
}

export interface NotDetected {
  ok: false;
  kind: ProxyFailKind;
  error: string;
}

export type TryOutcome = Detected | (NotDetected & { protocol: ProxyProtocol; spokeNoHttp?: true });


/** Abort reasons made once: a reason-less abort() builds a DOMException (with a stack) every time. */
const FINISHED = Object.freeze({ reason: 'finished' });
const SUPERSEDED = Object.freeze({ reason: 'a more preferred protocol works' });

export function judgeHeaders(judge: JudgeTarget): Record<string, string> {
  return { host: judge.authority, 'user-agent': CHECK_USER_AGENT, accept: 'application/json' };
}

/** A channel to the judge through the proxy: the proxy socket itself (http) or a tunnel. */
export async function judgeChannel(
  socket: import('node:net').Socket,
  ep: ProxyEndpoint,
  protocol: ProxyProtocol,
  judge: JudgeTarget,
  signal: AbortSignal,
): Promise<{ channel: Duplex; path: (nonce: string, suffix?: string) => string; extraHeaders: Record<string, string> }> {
  if (protocol === 'http') {
    return { channel: socket, path: (n, s) => judge.absolute(n, s), extraHeaders: proxyAuthorization(ep.spec) };
  }
  let channel = await openTunnel(socket, ep, protocol, { host: judge.host, port: judge.port }, signal);
  if (judge.tls) channel = await tlsHandshake(ep.connector, channel, judge.host, true, signal);
  return { channel, path: (n, s) => judge.path(n, s), extraHeaders: {} };
}

/** One protocol, one connection: does the judge's echo come back through it? */
export async function tryProtocol(
  ep: ProxyEndpoint,
  protocol: ProxyProtocol,
  judge: JudgeTarget,
  nonce: string,
  key: Buffer,
  timeouts: Timeouts,
  outer: AbortSignal,
  opts: {
    /** The tunnel to the judge is open (not for http, which has none): only the echo is left. */
    onTunnel?: () => void;
    /** On success, keep the connection open and hand it over (`link`) instead of closing it. */
    keep?: boolean;
  } = {},
): Promise<TryOutcome> {
  const started = performance.now();
  const ac = new AbortController();
  // The outer reason is passed on: a reason-less abort() builds a DOMException (with a stack).
  const onOuter = (): void => ac.abort(outer.reason);
  outer.addEventListener('abort', onOuter, { once: true });
  let socket: import('node:net').Socket | null = null;
  let timer: NodeJS.Timeout | undefined;
  // Where we were when time ran out tells silence apart from a proxy that could not reach the judge.
  let stage: 'handshake' | 'relay' = 'handshake';
  let handedOver = false;
  try {
    socket = await dialProxy(ep, timeouts.connectMs, ac.signal);
    timer = setTimeout(() => ac.abort(), timeouts.protocolMs);
    const localAddress = socket.localAddress ?? null;
    const { channel, path, extraHeaders } = await judgeChannel(socket, ep, protocol, judge, ac.signal);
    stage = 'relay';
    if (protocol !== 'http') opts.onTunnel?.();
    const res = await exchange(ep.connector, channel, {
      method: 'GET',
      path: path(nonce),
      // Without an agent node:http asks for Connection: close unless told otherwise.
      headers: { ...judgeHeaders(judge), ...extraHeaders, ...(opts.keep ? { connection: 'keep-alive' } : {}) },
      signal: ac.signal,
      keepBytes: MAX_ECHO_BYTES,
    });
    const echo = res.status === 200 ? parseEcho(res.body, nonce, key) : null;
    if (echo) {
      const responseTime = round2(performance.now() - started);
      if (!opts.keep) return { ok: true, protocol, echo, nonce, responseTime, localAddress };
      handedOver = true;
      return { ok: true, protocol, echo, nonce, responseTime, localAddress, link: { socket, channel, path, extraHeaders } };
    }
    if (protocol === 'http') {
      // A 5xx from an HTTP proxy is its way of saying it could not reach the judge.
      if (res.status === 407 || res.status >= 500) throw httpRefusal(ep.spec, res.status, 'relay our request to the judge');
      throw new ProxyStepError('protocol', `answered HTTP ${res.status} itself instead of relaying to the judge`);
    }
    throw new ProxyStepError('relay', `the tunnel led to something that is not our judge (HTTP ${res.status})`);
  } catch (err) {
    if (err instanceof ProxyStepError && err.kind.startsWith('connect')) return { ok: false, protocol, kind: err.kind, error: err.message };
    if (ac.signal.aborted) {
      if (outer.aborted) return { ok: false, protocol, kind: 'timeout', error: 'cancelled' };
      // For an HTTP proxy, bytes read mean it started answering: it was reaching the judge.
      const relaying = stage === 'relay' && (protocol !== 'http' || (socket?.bytesRead ?? 0) > 0);
      return relaying
        ? { ok: false, protocol, kind: 'relay_timeout', error: `the proxy accepted the request but the judge's answer did not come back within ${timeouts.protocolMs} ms` }
        : { ok: false, protocol, kind: 'timeout', error: `the proxy accepted the connection but did not answer within ${timeouts.protocolMs} ms` };
    }
    if (err instanceof ProxyStepError) return { ok: false, protocol, kind: err.kind, error: err.message };
    if (err instanceof ExchangeError) {
      // Through an established tunnel, a hang-up is the proxy failing to relay, not a wrong protocol.
      if (protocol === 'http') return { ok: false, protocol, kind: 'protocol', error: err.message, spokeNoHttp: true };
      return { ok: false, protocol, kind: 'relay', error: err.message };
    }
    throw err;
  } finally {
    clearTimeout(timer);
    outer.removeEventListener('abort', onOuter);
    ac.abort(FINISHED);
    if (!handedOver) socket?.destroy();
  }
}

/**
 * Tries the candidates in order of preference, each with a head start: the next one starts when
 * the previous failed or has had `headStartMs` without an answer, so a quick proxy costs one
 * connection and a slow or silent one still has every protocol tried in about the same time.
 * Resolves the most preferred working one, or the most telling failure.
 */
export async function detectProtocol(
  ep: ProxyEndpoint,
  judge: JudgeTarget,
  tickets: JudgeTickets,
  timeouts: Timeouts,
  headStartMs: number,
  signal: AbortSignal,
  more: {
    /**
     * A try opened its tunnel to the judge while every more preferred try had failed: if its
     * echo comes back, this protocol is the answer. Called at most once per try; the next steps
     * may start with it instead of waiting for the echo (which may still fail).
     */
    onLikely?: (protocol: ProxyProtocol) => void;
    /** The winner's connection is kept open (`link`) for the caller, who must close it. */
    keepLink?: boolean;
  } = {},
): Promise<{ result: Detected | NotDetected; tried: ProxyProtocol[] }> {
  const candidates = ep.spec.protocol ? [ep.spec.protocol] : [...PROTOCOL_PREFERENCE];
  const cancel = new AbortController();
  const onOuter = (): void => cancel.abort();
  signal.addEventListener('abort', onOuter, { once: true });
  const tried: ProxyProtocol[] = [];
  try {
    const outcomes: Array<TryOutcome | undefined> = [];
    // Once a working protocol has only failed ones before it, nothing else can beat it.
    const settle = (): void => {
      const first = candidates.findIndex((_, i) => outcomes[i] === undefined || outcomes[i]!.ok);
      if (first >= 0 && outcomes[first]?.ok) cancel.abort(SUPERSEDED);
    };
    const runs: Array<Promise<void>> = [];
    for (const [i, protocol] of candidates.entries()) {
      if (cancel.signal.aborted) break;
      tried.push(protocol);
      const nonce = await tickets.issue();
      const { onLikely } = more;
      const onTunnel = onLikely
        ? (): void => {
            if (cancel.signal.aborted) return;
            // (Not `every`: it skips the holes of tries still running.)
            for (let j = 0; j < i; j++) if (outcomes[j] === undefined || outcomes[j]!.ok) return;
            onLikely(protocol);
          }
        : undefined;
      const run = tryProtocol(ep, protocol, judge, nonce, tickets.key, timeouts, cancel.signal, { ...(onTunnel ? { onTunnel } : {}), keep: more.keepLink === true }).then((o) => {
        outcomes[i] = o;
        settle();
      });
      runs.push(run);
      // A peer that hung up on our HTTP request, or answered it with something that is not HTTP,
      // will hardly take an HTTP CONNECT: the next protocol starts alongside it, not after it.
      const rush = protocol === 'https' && outcomes.some((o) => o !== undefined && !o.ok && o.protocol === 'http' && o.spokeNoHttp === true);
      if (i < candidates.length - 1 && !rush) {
        let timer: NodeJS.Timeout | undefined;
        const headStart = new Promise<void>((resolve) => {
          // The head start is time we could have heard the answer in. While the event loop was
          // busy (a bulk of 100 checks and their judge requests in this process), an answer may
          // have waited unread: that time is added once, and one more I/O turn reads whatever
          // came in, so a busy server does not start needless tries of proxies that did answer.
          // An idle server adds next to nothing.
          const elu = performance.eventLoopUtilization();
          timer = setTimeout(() => {
            const busy = Math.min(performance.eventLoopUtilization(elu).active, headStartMs);
            timer = setTimeout(() => setImmediate(resolve), busy);
          }, headStartMs);
          cancel.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        await Promise.race([run, headStart]);
        clearTimeout(timer);
      }
    }
    await Promise.all(runs);
    const winner = outcomes.find((o): o is Detected => o !== undefined && o.ok);
    // Only the winner's connection is kept; a try that worked too but lost is closed.
    for (const o of outcomes) if (o !== undefined && o.ok && o !== winner) dropLink(o.link);
    if (winner) return { result: winner, tried };
    const failures = outcomes.filter((o): o is NotDetected & { protocol: ProxyProtocol } => o !== undefined && !o.ok && o.error !== 'cancelled');
    failures.sort((a, b) => FAIL_RANK[b.kind] - FAIL_RANK[a.kind]);
    const best = failures[0] ?? { kind: 'timeout' as const, error: 'the check was cancelled' };
    return { result: { ok: false, kind: best.kind, error: best.error }, tried };
  } finally {
    signal.removeEventListener('abort', onOuter);
  }
}
