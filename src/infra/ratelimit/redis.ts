import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { WINDOWS, WINDOW_MS, decide, windowStart, type Decision, type RateLimiter, type RedisState, type WindowLimits, type WindowSeed, type WindowState } from '../../domain/usage/rate-limit.js';
import { MemoryRateLimiter } from './memory.js';
import { inNextCheckPhase } from '../../lib/check-phase.js';
import { DEFAULTS } from '../../config.js';
import { RequestPathRedis, type RedisStateLog } from '../redis/request-path.js';
import { RedisUnavailableError } from '../../errors.js';

/** Every key of this service starts with this, so one Redis can serve other things too. */
export const REDIS_KEY_PREFIX = 'netdiag:rl:';
/** How long a key outlives its window, so instances whose clocks are a little apart still agree. */
export const REDIS_KEY_GRACE_MS = 60_000;
/** Keys asked for per SCAN step when flushing. */
export const REDIS_SCAN_COUNT = 1_000;
/**
 * How often each instance looks for instances that died (their heartbeat lapsed) and gives back
 * the calls they admitted and never recorded; an instance's heartbeat lapses after this long.
 */
export const REDIS_RECONCILE_MS = DEFAULTS.reconcileS * 1000;
/** Heartbeats per lapse: a beat or two lost to a slow Redis does not make a live instance look dead. */
const HEARTBEATS_PER_LAPSE = 3;
/** The ids of the instances that count calls in this Redis (a set). */
export const REDIS_INSTANCES_KEY = `${REDIS_KEY_PREFIX}instances`;
/** An instance's calls admitted and not yet recorded: a hash of window key → calls. */
export const unrecordedKey = (instance: string): string => `${REDIS_KEY_PREFIX}unrecorded:${instance}`;
/** Present while the instance lives (refreshed well within REDIS_RECONCILE_MS). */
export const heartbeatKey = (instance: string): string => `${REDIS_KEY_PREFIX}alive:${instance}`;
/** A safety net: an instance's unrecorded hash outlives its last consume by no more than the longest window's key. */
const UNRECORDED_TTL_MS = WINDOW_MS.day + 2 * REDIS_KEY_GRACE_MS;
/** Keys remembered as rebuilt after Redis came back; beyond this the least recently seen is forgotten (a key rebuilt twice costs a read). */
export const REDIS_RESYNC_MAX_KEYS = 100_000;
/**
 * Calls admitted by this instance alone (Redis away) whose records are not yet written, kept to
 * rebuild the shared windows exactly; beyond this many the memory is dropped (records lost to a
 * long database outage never come), leaving those windows at the recorded usage.
 */
export const REDIS_LOCAL_PENDING_MAX = 100_000;

/** consume's first answer when a window's key is missing and `check` was asked for. */
const MISSING = -1;

// Check all three windows and count in all three, or in none: one script, so several server
// instances sharing the Redis admit exactly min(N, limit) between them. ARGV[8] requests of one
// key (those of one iteration of the event loop) are taken at once, as if one after the other: the
// first k are admitted, k the room the fullest window has left (at most ARGV[8]), and the answer
// is {k, counts after}. With ARGV[7] = '1', a missing day key (Redis restarted empty, or the
// account's first call of the day here) is reported instead of counted from 0, so that the
// client seeds all three windows from the recorded usage first. A missing minute or hour key
// alone is a new window, which starts at 0: asking the database then would cost every active
// account a lookup every minute. With ARGV[9] = '1' (an account's calls, which usage records),
// the calls admitted are also counted in KEYS[4], the instance's hash of calls not yet
// recorded (field: the window key), whose expiry is ARGV[10]: if the instance dies before their
// records are written, another instance gives them back (RECONCILE).
const CONSUME = `
local counts = {}
for i = 1, 3 do
  local v = redis.call('GET', KEYS[i])
  if i == 3 and not v and ARGV[7] == '1' then return {${MISSING}, 0, 0, 0} end
  counts[i] = tonumber(v or '0')
end
local k = tonumber(ARGV[8])
for i = 1, 3 do
  local room = tonumber(ARGV[i]) - counts[i]
  if room < k then k = room end
end
if k <= 0 then return {0, counts[1], counts[2], counts[3]} end
for i = 1, 3 do
  counts[i] = redis.call('INCRBY', KEYS[i], k)
  -- INCRBY keeps a key's expiry: only a key it has just made needs one (RAISE makes keys with theirs).
  if counts[i] == k then redis.call('PEXPIRE', KEYS[i], ARGV[3 + i]) end
  if ARGV[9] == '1' then redis.call('HINCRBY', KEYS[4], KEYS[i], k) end
end
if ARGV[9] == '1' then redis.call('PEXPIRE', KEYS[4], ARGV[10]) end
return {k, counts[1], counts[2], counts[3]}
`;

// Takes calls whose usage records are written off the instance's unrecorded hash (KEYS[1]):
// ARGV is window key, calls, window key, calls... A field the hash no longer has (given back
// meanwhile) is left alone.
const RECORDED = `
for i = 1, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    if redis.call('HINCRBY', KEYS[1], ARGV[i], -tonumber(ARGV[i + 1])) <= 0 then redis.call('HDEL', KEYS[1], ARGV[i]) end
  end
end
return 0
`;

// Gives back the calls of a dead instance (ARGV[1]) that were admitted and never recorded: each
// window key of its hash (KEYS[1]) that still exists is lowered by them (never below zero); the
// hash and the instance's entry in the set of instances (KEYS[2]) go. Linear in the dead
// instance's pending calls, nothing else. Answers the window keys it lowered.
const RECONCILE = `
if redis.call('EXISTS', KEYS[3]) == 1 then return {} end
local pending = redis.call('HGETALL', KEYS[1])
local lowered = {}
for i = 1, #pending, 2 do
  local v = tonumber(redis.call('GET', pending[i]) or '0')
  local n = math.min(v, tonumber(pending[i + 1]))
  if n > 0 then
    redis.call('DECRBY', pending[i], n)
    lowered[#lowered + 1] = pending[i]
  end
end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
return lowered
`;

// Raises each window to at least the recorded count (creating it when missing): several
// instances seeding at once leave the highest figure, and counts made meanwhile are kept.
const RAISE = `
for i = 1, 3 do
  local v = redis.call('GET', KEYS[i])
  if not v or tonumber(v) < tonumber(ARGV[i]) then redis.call('SET', KEYS[i], ARGV[i], 'PX', ARGV[3 + i]) end
end
return 1
`;

/** The windows' key expiries, relative, from the caller's clock (tests run in the past). */
function expiriesAt(now: number): number[] {
  return WINDOWS.map((w) => windowStart(w, now) + WINDOW_MS[w] - now + REDIS_KEY_GRACE_MS);
}

/** One key's consumes of one iteration of the event loop, with the same windows (minute) and limits. */
interface ConsumeBatch {
  key: string;
  limits: WindowLimits;
  /** The first request's clock: the windows' keys and expiries. */
  now: number;
  minute: number;
  /** Per request, in arrival order. */
  nows: number[];
  resolves: Array<(d: Decision) => void>;
  rejects: Array<(err: unknown) => void>;
}

type Script = (...args: Array<string | number>) => Promise<number[]>;

export interface RedisRateLimiterOptions {
  /** The recorded usage, which rebuilds windows Redis does not have and seeds the fallback. */
  seed?: WindowSeed;
  log?: RedisStateLog;
  /**
   * The keys whose admitted calls usage records (accounts): they count as unrecorded until
   * `recorded` says their records are written, and are given back if this instance dies first.
   */
  recordsCallsOf?: (key: string) => boolean;
  /** REDIS_RECONCILE_MS: heartbeat lapse and reconcile period (tests shorten it). */
  reconcileMs?: number;
  /** Epoch ms now, for the windows raised to the recorded usage after a reconcile. */
  now?: () => number;
}

/**
 * Counts in Redis, shared by every instance. A window's key that Redis does not have (it
 * restarted empty, or the window is new) is first rebuilt from the recorded usage. While Redis
 * does not answer, this instance limits by itself (an in-process limiter seeded from the recorded
 * usage, with the same figures) and says so once in the log and in `redisState()`; when Redis
 * answers again it goes back to it, and each key's windows are raised to the recorded usage once,
 * so the calls admitted meanwhile count there too.
 */
// Takes one request back from the three windows it was counted in (never below zero), and from
// the instance's calls not yet recorded (KEYS[4]) when it was counted there.
const REFUND = `
for i = 1, 3 do
  local n = tonumber(redis.call('GET', KEYS[i]) or '0')
  if n > 0 then redis.call('DECR', KEYS[i]) end
  if redis.call('HEXISTS', KEYS[4], KEYS[i]) == 1 then
    if redis.call('HINCRBY', KEYS[4], KEYS[i], -1) <= 0 then redis.call('HDEL', KEYS[4], KEYS[i]) end
  end
end
return 0
`;

export class RedisRateLimiter implements RateLimiter {
  private readonly connection: RequestPathRedis;
  private readonly redis: Redis;
  private readonly seed: WindowSeed | undefined;
  private readonly log: RedisStateLog | undefined;
  /** Limits while Redis is away; made afresh each time it goes. */
  private fallback: MemoryRateLimiter | null = null;
  private closing = false;
  /** After Redis came back: keys whose windows were raised to the recorded usage, until `resyncUntil`. */
  private resynced = new LRUCache<string, true>({ max: REDIS_RESYNC_MAX_KEYS });
  private resyncUntil = -Infinity;
  /** Consumes waiting to be sent, by key. */
  private batches = new Map<string, ConsumeBatch[]>();
  private flushScheduled = false;
  private readonly flushSoon = () => this.flushBatches();
  /** This instance's calls admitted and not yet recorded, in Redis (see CONSUME). */
  private readonly instance = randomUUID();
  private readonly unrecorded = unrecordedKey(this.instance);
  private readonly recordsCallsOf: (key: string) => boolean;
  private readonly reconcileMs: number;
  private readonly now: () => number;
  private heartbeat: NodeJS.Timeout | null = null;
  private reconciler: NodeJS.Timeout | null = null;
  /**
   * Per key, the times (`now` of consume, the record's `at`) of the calls the fallback admitted
   * whose records are not written yet: in neither Redis nor the recorded usage, so a window
   * rebuilt from the records after Redis came back adds them (else the shared day window stayed
   * below the records once they landed), and their records are not taken off the calls admitted
   * in Redis (`recorded`).
   */
  private readonly localPending = new Map<string, number[]>();
  private localPendingSize = 0;

  constructor(url: string, opts: RedisRateLimiterOptions = {}) {
    this.seed = opts.seed;
    this.log = opts.log;
    this.recordsCallsOf = opts.recordsCallsOf ?? (() => false);
    this.reconcileMs = opts.reconcileMs ?? REDIS_RECONCILE_MS;
    this.now = opts.now ?? Date.now;
    this.connection = new RequestPathRedis(url, { degraded: (err) => this.degraded(err), recovered: () => this.recovered() });
    this.redis = this.connection.client;
    this.redis.defineCommand('ndConsume', { numberOfKeys: 4, lua: CONSUME });
    this.redis.defineCommand('ndRaise', { numberOfKeys: 3, lua: RAISE });
    this.redis.defineCommand('ndRefund', { numberOfKeys: 4, lua: REFUND });
    this.redis.defineCommand('ndRecorded', { numberOfKeys: 1, lua: RECORDED });
    this.redis.defineCommand('ndReconcile', { numberOfKeys: 3, lua: RECONCILE });
    if (opts.recordsCallsOf) this.startReconciling();
  }

  redisState(): RedisState {
    return this.connection.degraded ? 'degraded' : 'ok';
  }

  private degraded(err: unknown): void {
    this.fallback = new MemoryRateLimiter(this.seed);
    this.log?.warn(
      { err, redis: 'degraded' },
      'Redis does not answer: this instance limits by itself with the same plan figures (seeded from the recorded usage) until it does',
    );
  }

  private recovered(): void {
    const fallback = this.fallback;
    this.fallback = null;
    void fallback?.close();
    this.resynced.clear();
    // Set from the first consume's clock (tests run in the past): the rest of that day.
    this.resyncUntil = Infinity;
    this.log?.info({ redis: 'ok' }, 'Redis answers again: limits are shared again, its windows rebuilt from the recorded usage');
  }

  private fallbackLimiter(): MemoryRateLimiter {
    if (!this.fallback) this.fallback = new MemoryRateLimiter(this.seed);
    return this.fallback;
  }

  /** A call counted by this instance alone: remembered until its record is written (localPending). */
  private async consumeLocally(key: string, limits: WindowLimits, now: number): Promise<Decision> {
    const decision = await this.fallbackLimiter().consume(key, limits, now);
    if (decision.allowed && this.recordsCallsOf(key)) {
      if (this.localPendingSize >= REDIS_LOCAL_PENDING_MAX) {
        this.localPending.clear();
        this.localPendingSize = 0;
      }
      const ats = this.localPending.get(key);
      if (ats) ats.push(now);
      else this.localPending.set(key, [now]);
      this.localPendingSize++;
    }
    return decision;
  }

  /** Forgets one locally admitted call of `key` at `at` (recorded, or refunded): true when there was one. */
  private takeLocal(key: string, at: number): boolean {
    const ats = this.localPending.get(key);
    const i = ats ? ats.indexOf(at) : -1;
    if (i < 0) return false;
    ats!.splice(i, 1);
    if (ats!.length === 0) this.localPending.delete(key);
    this.localPendingSize--;
    return true;
  }

  /** The locally admitted calls of `key` not yet recorded, in the minute, hour and day of `now` (older ones dropped). */
  private localPendingIn(key: string, now: number): number[] {
    const ats = this.localPending.get(key);
    if (!ats) return [0, 0, 0];
    const starts = WINDOWS.map((w) => windowStart(w, now));
    const today = ats.filter((at) => at >= starts[2]!);
    this.localPendingSize -= ats.length - today.length;
    if (today.length === 0) this.localPending.delete(key);
    else this.localPending.set(key, today);
    return starts.map((start) => today.filter((at) => at >= start).length);
  }

  private keys(key: string, now: number): string[] {
    // The hash tag keeps one client's three keys in one slot on a Redis Cluster.
    return WINDOWS.map((w) => `${REDIS_KEY_PREFIX}{${key}}:${w}:${windowStart(w, now)}`);
  }

  /**
   * Heartbeat and reconcile: this instance says it lives (a key that lapses after reconcileMs,
   * renewed HEARTBEATS_PER_LAPSE times as often), and at start and every reconcileMs gives back the unrecorded
   * calls of every instance whose heartbeat lapsed (killed before their records were written),
   * then raises those accounts' windows to the recorded usage, so none ends below it.
   */
  private startReconciling(): void {
    // Tried even while this instance counts by itself: an instance that is alive and still
    // connected must not look dead to the others (they would give back calls whose records it is
    // writing, leaving the shared windows below the records). Disconnected, it fails at once.
    const beat = () => {
      this.redis
        .multi()
        .set(heartbeatKey(this.instance), '1', 'PX', this.reconcileMs)
        .sadd(REDIS_INSTANCES_KEY, this.instance)
        .exec()
        .catch(() => undefined);
    };
    // A failure is said (at most once per period): windows may stay lowered below the recorded usage.
    const reconcile = () =>
      void this.reconcile().catch((err: unknown) => this.log?.warn({ err }, 'giving back the calls of a stopped instance failed; they are given back next period unless already taken off its windows'));
    void this.connection.started().then(() => {
      if (this.closing) return;
      beat();
      reconcile();
      this.heartbeat = setInterval(beat, Math.max(1, Math.floor(this.reconcileMs / HEARTBEATS_PER_LAPSE)));
      this.heartbeat.unref();
      this.reconciler = setInterval(reconcile, this.reconcileMs);
      this.reconciler.unref();
    });
  }

  /** Gives back the unrecorded calls of the instances whose heartbeat lapsed; O(their pending calls). */
  async reconcile(): Promise<void> {
    await this.connection.started();
    if (this.connection.degraded || this.closing) return;
    for (const other of await this.redis.smembers(REDIS_INSTANCES_KEY)) {
      if (other === this.instance) continue;
      const lowered = (await this.call('ndReconcile', [unrecordedKey(other), REDIS_INSTANCES_KEY, heartbeatKey(other), other])) as unknown as string[];
      if (lowered.length === 0) continue;
      this.log?.info({ instance: other, windows: lowered.length }, 'calls an instance admitted and never answered (it stopped) were given back');
      // A call whose record was written just before the instance died may have been given back
      // too: the windows go no lower than the recorded usage.
      const now = this.now();
      const keys = new Set<string>();
      for (const window of lowered) {
        // The account key sits in the window key's hash tag: from its first '{' to its last '}'.
        const open = window.indexOf('{');
        const close = window.lastIndexOf('}');
        if (open >= 0 && close > open) keys.add(window.slice(open + 1, close));
      }
      for (const key of keys) await this.raise(key, this.keys(key, now), expiriesAt(now), now);
    }
  }

  /**
   * Calls admitted by `consume` whose usage records are written: off this instance's unrecorded
   * calls, in one script call.
   */
  recorded(calls: ReadonlyArray<{ key: string; at: number }>): void {
    // Tried even while degraded (it fails at once when disconnected): calls admitted in Redis whose
    // records are written must leave the unrecorded hash, or a reconcile would take them back.
    if (calls.length === 0) return;
    const counts = new Map<string, number>();
    for (const { key, at } of calls) {
      // Admitted by this instance alone: never counted in Redis, nothing to take off there.
      if (this.localPending.size > 0 && this.takeLocal(key, at)) continue;
      for (const window of this.keys(key, at)) counts.set(window, (counts.get(window) ?? 0) + 1);
    }
    if (counts.size === 0) return;
    const args: Array<string | number> = [this.unrecorded];
    for (const [window, n] of counts) args.push(window, n);
    void this.call('ndRecorded', args).catch(() => undefined);
  }

  private async call(name: 'ndConsume' | 'ndRaise' | 'ndRefund' | 'ndRecorded' | 'ndReconcile', args: Array<string | number>): Promise<number[]> {
    const run = (this.redis as unknown as Record<string, Script>)[name]!;
    try {
      return await run.call(this.redis, ...args);
    } catch (err) {
      throw new RedisUnavailableError(err);
    }
  }

  /**
   * Raises the key's windows to the recorded usage plus the calls this instance admitted alone
   * whose records are not written yet (a failing store fails the request, as it would anyway).
   */
  private async raise(key: string, keys: string[], expiries: number[], now: number): Promise<void> {
    // Read before the records: a record written in between is then counted twice (the window a
    // call too high), never missed (a call too low, admitted again).
    const local = this.localPendingIn(key, now);
    const seeded = this.seed ? await this.seed(key, now) : { minute: 0, hour: 0, day: 0 };
    await this.call('ndRaise', [...keys, seeded.minute + local[0]!, seeded.hour + local[1]!, seeded.day + local[2]!, ...expiries]);
  }

  /** True once per key after Redis came back, for the rest of that day. */
  private needsResync(key: string, now: number): boolean {
    if (this.resyncUntil === -Infinity) return false;
    if (this.resyncUntil === Infinity) this.resyncUntil = windowStart('day', now) + WINDOW_MS.day;
    if (now >= this.resyncUntil) {
      this.resyncUntil = -Infinity;
      this.resynced.clear();
      return false;
    }
    if (this.resynced.has(key)) return false;
    this.resynced.set(key, true);
    return true;
  }

  /**
   * Takes a batch's requests in one script call: the first `admitted` of them, in the order they
   * came, are admitted, each with its own counts, as if they had been taken one after the other.
   */
  private async consumeShared(batch: ConsumeBatch): Promise<void> {
    const { key, limits, now } = batch;
    const n = batch.nows.length;
    const expiries = expiriesAt(now);
    const keys = this.keys(key, now);
    if (this.needsResync(key, now)) await this.raise(key, keys, expiries, now);
    const track = this.recordsCallsOf(key) ? 1 : 0;
    const consume = (check: number) =>
      this.call('ndConsume', [...keys, this.unrecorded, limits.minute, limits.hour, limits.day, ...expiries, check, n, track, UNRECORDED_TTL_MS]);
    let [admitted, ...after] = await consume(1);
    if (admitted === MISSING) {
      // Once per key and window: Redis has not seen it (restarted empty, or a new window).
      await this.raise(key, keys, expiries, now);
      [admitted, ...after] = await consume(0);
    }
    const k = Number(admitted);
    const before = after.map((c) => Number(c) - k);
    for (let i = 0; i < n; i++) {
      const taken = i < k ? i + 1 : k;
      batch.resolves[i]!(decide(i < k, [before[0]! + taken, before[1]! + taken, before[2]! + taken], limits, batch.nows[i]!));
    }
  }

  /** Runs the batches gathered since the last flush (each key's requests of this iteration). */
  private flushBatches(): void {
    this.flushScheduled = false;
    const batches = this.batches;
    this.batches = new Map();
    for (const list of batches.values()) for (const batch of list) void this.runBatch(batch);
  }

  private async runBatch(batch: ConsumeBatch): Promise<void> {
    if (!this.connection.degraded) {
      try {
        return await this.consumeShared(batch);
      } catch (err) {
        if (!(err instanceof RedisUnavailableError) || this.closing) {
          for (const reject of batch.rejects) reject(err);
          return;
        }
        this.connection.degrade(err.cause);
      }
    }
    // Redis went away since these requests came: this instance limits them by itself.
    for (let i = 0; i < batch.nows.length; i++) {
      try {
        batch.resolves[i]!(await this.consumeLocally(batch.key, batch.limits, batch.nows[i]!));
      } catch (err) {
        batch.rejects[i]!(err);
      }
    }
  }

  /** Joins the request to its key's batch of this iteration of the event loop (same windows and limits), sent once its code has run. */
  private enqueue(key: string, limits: WindowLimits, now: number, resolve: (d: Decision) => void, reject: (err: unknown) => void): void {
    let list = this.batches.get(key);
    if (!list) {
      list = [];
      this.batches.set(key, list);
    }
    const minute = windowStart('minute', now);
    let batch: ConsumeBatch | undefined;
    for (const b of list) {
      if (b.minute === minute && b.limits.minute === limits.minute && b.limits.hour === limits.hour && b.limits.day === limits.day) {
        batch = b;
        break;
      }
    }
    if (!batch) {
      batch = { key, limits, now, minute, nows: [], resolves: [], rejects: [] };
      list.push(batch);
    }
    batch.nows.push(now);
    batch.resolves.push(resolve);
    batch.rejects.push(reject);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      // In the next iteration's check phase, as the auth fence is sent: every request read in
      // this iteration and the next, and every one a single fence let through, joins one batch.
      // ioredis then pipelines the batches' calls in one write. Kept for their figures:
      // BENCHMARKS.md, "Speed tricks", rows "Redis limiter batches" and "two iterations per round trip".
      inNextCheckPhase(this.flushSoon);
    }
  }

  async refund(key: string, now: number): Promise<void> {
    // A call admitted alone is refunded before any record of it: it is no call to add anywhere.
    this.takeLocal(key, now);
    if (!this.connection.degraded) {
      // Counted in Redis or by the fallback, whichever admitted it: a refund that fails is dropped.
      await this.call('ndRefund', [...this.keys(key, now), this.unrecorded]).catch(() => undefined);
      return;
    }
    this.fallback?.refund(key, now);
  }

  async consume(key: string, limits: WindowLimits, now: number): Promise<Decision> {
    await this.connection.started();
    if (this.connection.degraded) return this.consumeLocally(key, limits, now);
    return new Promise<Decision>((resolve, reject) => this.enqueue(key, limits, now, resolve, reject));
  }

  async peek(key: string, limits: WindowLimits, now: number): Promise<WindowState[]> {
    await this.connection.started();
    if (!this.connection.degraded) {
      try {
        const values = await this.redis.mget(...this.keys(key, now));
        return decide(true, values.map((v) => Number(v ?? 0)), limits, now).windows;
      } catch (err) {
        if (this.closing) throw err;
        this.connection.degrade(err);
      }
    }
    return this.fallbackLimiter().peek(key, limits, now);
  }

  /** For tests: forget every counter of this service. */
  async flush(): Promise<void> {
    await this.connection.started();
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${REDIS_KEY_PREFIX}*`, 'COUNT', REDIS_SCAN_COUNT);
      cursor = next;
      if (keys.length > 0) await this.redis.del(...keys);
    } while (cursor !== '0');
  }

  async close(): Promise<void> {
    this.closing = true;
    this.connection.close();
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.reconciler) clearInterval(this.reconciler);
    // What is still unrecorded (records lost to a database outage) is given back by the next
    // reconcile of another instance, or of the next start.
    if (this.heartbeat && !this.connection.degraded) await this.redis.del(heartbeatKey(this.instance)).catch(() => undefined);
    await this.fallback?.close();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
