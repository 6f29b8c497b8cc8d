import { mapConcurrent } from '../../lib/map-concurrent.js';
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Connector } from '../connector.js';
import type { CheckedAddress, Dialer } from '../dialer.js';
import type { SocketBudget } from '../socket-budget.js';
import type { NonceUse } from './judge-repository.js';
import { judgeAnonymity } from './anonymity.js';
import {
  PROXY_BULK_CONCURRENCY,
  PROXY_BULK_SOCKETS,
  PROXY_CONNECT_TIMEOUT_MS,
  PROXY_PROTOCOL_TIMEOUT_MS,
  PROXY_RESOLVE_CONCURRENCY,
  PROXY_SINGLE_SOCKETS,
  PROXY_SPEED_TIMEOUT_MS,
  PROXY_SSL_TIMEOUT_MS,
  PROXY_TRY_HEAD_START_MS,
  SPEED_UPLOAD_BYTES,
} from './defaults.js';
import { detectProtocol, dropLink, type JudgeLink, type Timeouts } from './detect.js';
import { ALL_NONCE_USES, Judge } from './judge.js';
import { JudgeDirectory, OwnAddresses } from './judge-client.js';
import { locate } from './location.js';
import { parseProxy } from './parse.js';
import { shownProxyInput } from './redact.js';
import { measureSpeed } from './speed.js';
import { checkSsl } from './ssl.js';
import { TIMEOUT_KINDS, type Destination } from './tunnel.js';
import { ALL_CHECKS, type CheckFlags, type GeoLookup, type ProxyBulkItem, type ProxyCheckResult, type ProxyEntryFailure, type ProxyProtocol, type ProxySpec } from './types.js';
import { settleEntry, type EntryError } from '../bulk-entries.js';
import { round2 } from '../../lib/round.js';
import { JudgeUnavailableError, ResolveError } from '../../errors.js';

export interface ProxyCheckerOptions {
  /** Resolves the proxies (the target policy) and gives each check its socket budget. */
  dialer: Pick<Dialer, 'resolve' | 'socketBudget'>;
  /** Connects to the proxies, and TLS and HTTP through them. */
  connector: Connector;
  /** NETDIAG_JUDGE_URL (or NETDIAG_PUBLIC_URL + /judge); unset: this server's own /judge, known once it listens. */
  judgeUrl?: string | undefined;
  /** Where the judge comes from; built from `judgeUrl` alone unless given (the app adds the database's record). */
  judges?: JudgeDirectory;
  /** NETDIAG_SSL_CHECK_TARGET. */
  sslTarget: Destination;
  geo?: GeoLookup | null;
  timeouts?: Partial<Timeouts>;
  /** The judge whose nonces checks carry; built over the database by the app (one in memory unless given). */
  judge?: Judge;
  now?: () => Date;
}

export const DEFAULT_TIMEOUTS: Timeouts = {
  headStartMs: PROXY_TRY_HEAD_START_MS,
  connectMs: PROXY_CONNECT_TIMEOUT_MS,
  protocolMs: PROXY_PROTOCOL_TIMEOUT_MS,
  sslMs: PROXY_SSL_TIMEOUT_MS,
  speedMs: PROXY_SPEED_TIMEOUT_MS,
};

type Resolved = { address: CheckedAddress } | { error: string };

/** A bulk entry once parsed and resolved: ready to check, or refused (with its spec when it parsed). */
type BulkEntry = { spec: ProxySpec; resolved: Resolved } | { input: string; spec?: ProxySpec; refused: EntryError };

/** A result before any check ran: `failed`, every field asked for null, the proxy shown without its password. */
function uncheckedResult(input: string, flags: CheckFlags, checkedAt: string): Omit<ProxyCheckResult, 'host' | 'port'> {
  return {
    proxy: shownProxyInput(input),
    status: 'failed',
    protocol: null,
    response_time: null,
    ...(flags.anonymity ? { anonymity_level: null } : {}),
    ...(flags.ssl ? { ssl_support: null } : {}),
    ...(flags.location ? { location: null } : {}),
    ...(flags.speed ? { speed: null } : {}),
    exit_ip: null,
    error: null,
    checked_at: checkedAt,
    checks: { protocol: { status: 'failed', error: null, time: 0, tried: [] } },
  };
}

/** An SSL check started before the detection ended (see onLikely in #run). */
interface EarlySsl {
  protocol: ProxyProtocol;
  cancel: AbortController;
  ssl: ReturnType<typeof checkSsl>;
}

/** An SSL check started early for a protocol that did not end up the answer: stopped, and its sockets gone. */
async function dropEarly(early: EarlySsl | null): Promise<void> {
  if (early === null) return;
  early.cancel.abort();
  await early.ssl.catch(() => undefined);
}

/** Once `signal` has aborted, whatever the work ends with, the caller gets the signal's reason. */
async function cancellable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  try {
    const value = await work;
    signal?.throwIfAborted();
    return value;
  } catch (err) {
    signal?.throwIfAborted();
    throw err;
  }
}

/**
 * The proxy checker: parse, resolve through the target policy, detect the protocol with the
 * judge, then (as asked) judge anonymity, check SSL, measure speed and locate the exit.
 */
export class ProxyChecker {
  readonly judge: Judge;
  readonly ownAddresses: OwnAddresses;
  readonly judges: JudgeDirectory;
  readonly #dialer: ProxyCheckerOptions['dialer'];
  readonly #connector: Connector;
  readonly #sslTarget: Destination;
  readonly #geo: GeoLookup | null;
  readonly #timeouts: Timeouts;
  readonly #now: () => Date;
  readonly #upload = randomBytes(SPEED_UPLOAD_BYTES);

  constructor(opts: ProxyCheckerOptions) {
    this.#dialer = opts.dialer;
    this.#connector = opts.connector;
    this.judge = opts.judge ?? new Judge();
    this.judges = opts.judges ?? new JudgeDirectory({ configured: opts.judgeUrl });
    this.#sslTarget = opts.sslTarget;
    this.#geo = opts.geo ?? null;
    this.#timeouts = { ...DEFAULT_TIMEOUTS, ...opts.timeouts };
    this.#now = opts.now ?? (() => new Date());
    this.ownAddresses = new OwnAddresses({ judge: () => this.judges.current, nonces: this.judge });
  }

  get judgeUrl(): string | null {
    return this.judges.current?.url.href ?? null;
  }

  /**
   * The server listens: its own /judge becomes the judge (unless configured) and is recorded for
   * workers; it learns our address. Rejects when the record could not be written.
   */
  async listening(bound: { address: string; port: number }): Promise<void> {
    const recorded = this.judges.listening(bound);
    await Promise.all([recorded, this.ownAddresses.refresh()]);
  }

  /**
   * `signal` ends the work early (the client went away): steps in flight stop, and the call
   * rejects with the signal's reason instead of answering.
   */
  async check(input: string, flags: CheckFlags = ALL_CHECKS, signal?: AbortSignal): Promise<ProxyCheckResult> {
    const spec = parseProxy(input, 'proxy');
    const resolved = await this.#resolve(spec, 'proxy');
    return cancellable(this.#run(spec, resolved, flags, this.#dialer.socketBudget(PROXY_SINGLE_SOCKETS), signal), signal);
  }

  /**
   * `onItem` is told each proxy's result as it completes, with its input position (jobs stream
   * these). The positions `skip` names (a job run again: its stored items) are neither resolved
   * nor checked nor reported, and their places in the answer are undefined.
   */
  async checkBulk(inputs: readonly string[], flags?: CheckFlags, signal?: AbortSignal, onItem?: (index: number, result: ProxyBulkItem) => void): Promise<ProxyBulkItem[]>;
  async checkBulk(
    inputs: readonly string[],
    flags: CheckFlags,
    signal: AbortSignal | undefined,
    onItem: ((index: number, result: ProxyBulkItem) => void) | undefined,
    skip: { has(index: number): boolean } | undefined,
  ): Promise<Array<ProxyBulkItem | undefined>>;
  async checkBulk(
    inputs: readonly string[],
    flags: CheckFlags = ALL_CHECKS,
    signal?: AbortSignal,
    onItem?: (index: number, result: ProxyBulkItem) => void,
    skip?: { has(index: number): boolean },
  ): Promise<Array<ProxyBulkItem | undefined>> {
    // Every proxy passes the target policy before any of them is sent a packet. An entry that is
    // not a proxy, or whose target is forbidden, gets an item saying so; the others are checked.
    const entries = await mapConcurrent(inputs, PROXY_RESOLVE_CONCURRENCY, async (input, i): Promise<BulkEntry | undefined> => {
      if (skip?.has(i)) return undefined;
      const field = `proxies[${i}]`;
      const parsed = await settleEntry(field, () => parseProxy(input, field));
      if ('refused' in parsed) return { input, refused: parsed.refused };
      const resolved = await settleEntry(field, () => this.#resolve(parsed.value, field));
      return 'refused' in resolved ? { input, spec: parsed.value, refused: resolved.refused } : { spec: parsed.value, resolved: resolved.value };
    });
    const budget = this.#dialer.socketBudget(PROXY_BULK_SOCKETS);
    // Every check of the bulk and each of its steps listen to this one signal: many listeners
    // are the design here, not a leak (unbounded, or Node warns once past ten).
    if (signal) setMaxListeners(0, signal);
    const checkOne = async (entry: BulkEntry | undefined, i: number): Promise<ProxyBulkItem | undefined> => {
      if (entry === undefined) return undefined;
      const item = 'refused' in entry ? this.#refused(entry, flags) : await this.#run(entry.spec, entry.resolved, flags, budget, signal);
      onItem?.(i, item);
      return item;
    };
    return cancellable(mapConcurrent(entries, PROXY_BULK_CONCURRENCY, checkOne), signal);
  }

  /** The item of a bulk entry that was refused before any packet: `failed`, with why and its code. */
  #refused(entry: Extract<BulkEntry, { refused: EntryError }>, flags: CheckFlags): ProxyEntryFailure {
    const item: ProxyEntryFailure = {
      ...uncheckedResult(entry.input, flags, this.#now().toISOString()),
      ...(entry.spec ? { host: entry.spec.host, port: entry.spec.port } : {}),
      ...entry.refused,
    };
    item.checks.protocol.error = entry.refused.error;
    return item;
  }

  async #resolve(spec: ProxySpec, field: string): Promise<Resolved> {
    try {
      const { addresses } = await this.#dialer.resolve(spec.host, { field });
      return { address: addresses[0]! };
    } catch (err) {
      if (err instanceof ResolveError) return { error: `the proxy's host does not resolve (${err.code})` };
      // Anything else (the policy's TargetForbiddenError above all) fails the single check, and
      // is the entry's item in a bulk.
      throw err;
    }
  }

  async #run(spec: ProxySpec, resolved: Resolved, flags: CheckFlags, budget: SocketBudget, cancel?: AbortSignal): Promise<ProxyCheckResult> {
    const result: ProxyCheckResult = { ...uncheckedResult(spec.input, flags, this.#now().toISOString()), host: spec.host, port: spec.port };
    if ('error' in resolved) {
      result.error = resolved.error;
      result.checks.protocol.error = resolved.error;
      return result;
    }
    // No judge is the service's fault: a 503, never a proxy reported failed (docs/proxy.md).
    const judge = await this.judges.target();

    const ep = { connector: this.#connector, address: resolved.address, spec, budget };
    const started = performance.now();
    const signal = cancel ?? new AbortController().signal;
    // One nonce per protocol try: one echo, and one download and one upload when speed is measured.
    const uses: readonly NonceUse[] = flags.speed ? ALL_NONCE_USES : ['echo'];
    const issued: string[] = [];
    let link: JudgeLink | null = null;
    try {
      const key = await this.judge.key();
      const tickets = {
        key,
        issue: async (): Promise<string> => {
          const nonce = await this.judge.issue(uses);
          issued.push(nonce);
          return nonce;
        },
      };
      // Learning our own address (rarely needed) overlaps with the detection.
      const own = flags.anonymity ? this.ownAddresses.get() : null;
      // The SSL check starts as soon as a try's tunnel to the judge is open and nothing more
      // preferred can still win: it overlaps the echo's round trip instead of following it. It
      // is cancelled (and never reported) when that try does not end up the answer.
      const early: { started: EarlySsl | null } = { started: null };
      const onLikely = flags.ssl
        ? (protocol: ProxyProtocol): void => {
            if (early.started !== null) return;
            const cancel = new AbortController();
            const onOuter = (): void => cancel.abort();
            signal.addEventListener('abort', onOuter, { once: true });
            const ssl = checkSsl(ep, protocol, this.#sslTarget, this.#timeouts, cancel.signal).finally(() => signal.removeEventListener('abort', onOuter));
            // Awaited later; until then a rejection must not count as unhandled.
            ssl.catch(() => undefined);
            early.started = { protocol, cancel, ssl };
          }
        : undefined;
      const { result: detected, tried } = await detectProtocol(ep, judge, tickets, this.#timeouts, this.#timeouts.headStartMs, signal, { ...(onLikely ? { onLikely } : {}), keepLink: flags.speed }).catch(async (err: unknown) => {
        await dropEarly(early.started);
        throw err;
      });
      const earlySsl = early.started !== null && detected.ok && early.started.protocol === detected.protocol ? early.started.ssl : null;
      if (earlySsl === null) await dropEarly(early.started);
      if (!detected.ok) {
        const status = TIMEOUT_KINDS.has(detected.kind) ? 'timeout' : 'failed';
        const error = detected.error;
        // A proxy that did not reach the judge may be fine and the judge dead, or refusing our
        // nonces: when the judge does not answer us directly either, the service is at fault.
        await (own ?? this.ownAddresses.get());
        const judgeError = this.ownAddresses.error;
        if (judgeError !== null) throw new JudgeUnavailableError(`the judge ${judge.url.href} does not answer this process (${judgeError}), so the proxy's answer (${error}) proves nothing`);
        result.status = status;
        result.error = error;
        result.checks.protocol = { status, error, time: round2(performance.now() - started), tried };
        return result;
      }
      // The speed test goes on over the winning try's connection (its nonce's download and upload are still unspent).
      link = detected.link ?? null;
      result.status = 'working';
      result.protocol = detected.protocol;
      result.response_time = detected.responseTime;
      result.exit_ip = detected.echo.remote_address;
      result.checks.protocol = { status: 'ok', error: null, time: detected.responseTime, tried };

      const [ssl, speed, ownAddresses] = await Promise.all([
        flags.ssl ? (earlySsl ?? checkSsl(ep, detected.protocol, this.#sslTarget, this.#timeouts, signal)) : null,
        flags.speed ? measureSpeed(ep, detected.protocol, judge, detected.nonce, key, this.#upload, this.judge.downloadPayload.length, this.#timeouts, signal, link) : null,
        own,
      ]);
      if (ownAddresses) {
        // Our side of the connection is ours too, but only once the public one is known.
        const mine = new Set(ownAddresses);
        if (mine.size > 0 && detected.localAddress) mine.add(detected.localAddress);
        const verdict = judgeAnonymity(detected.echo, mine);
        result.anonymity_level = verdict.level;
        result.proxy_headers = verdict.headers;
        result.checks.anonymity = { status: verdict.level ? 'ok' : 'failed', error: verdict.level ? null : verdict.reason, time: 0 };
      }
      if (ssl) {
        result.ssl_support = ssl.supported;
        result.checks.ssl = ssl.report;
      }
      if (speed) {
        result.speed = speed.speed;
        result.checks.speed = speed.report;
      }
      if (flags.location) result.location = locate(this.#geo, result.exit_ip);
      return result;
    } finally {
      dropLink(link);
      // A nonce that cannot be revoked (database gone) still expires, and each use works once at most.
      if (issued.length > 0) await this.judge.revoke(...issued).catch(() => undefined);
    }
  }
}
