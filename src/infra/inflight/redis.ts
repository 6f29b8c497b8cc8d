import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { REDIS_PROBE_MS, requestPathRedis, type LimiterLog } from '../ratelimit/redis.js';
import { MemoryInFlight } from './memory.js';
import type { InFlightSlots } from '../../domain/in-flight.js';

/** Every key of this counter starts with this. */
export const IN_FLIGHT_KEY_PREFIX = 'netdiag:inflight:';
/**
 * A slot taken through Redis is a lease: it lapses this long after it was last renewed, so the
 * slots of an instance that dies (no release ever comes) come back by themselves.
 */
export const IN_FLIGHT_LEASE_MS = 30_000;
/** A live request renews its lease this often, well within the lease. */
export const IN_FLIGHT_RENEW_MS = 10_000;

// One sorted set per owner: member = lease id, score = when it lapses (Redis' own clock, so
// instances whose clocks are apart agree). Lapsed leases are dropped before counting.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[1]), ARGV[2]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 1
`;

type Scripted = Redis & {
  ndInflightAcquire(key: string, max: number, leaseMs: number, id: string): Promise<number>;
  ndInflightRenew(key: string, leaseMs: number, id: string): Promise<number>;
};

export interface RedisInFlightOptions {
  leaseMs?: number;
  renewMs?: number;
  /** Where it says that it counts by itself and that Redis is back: one line each, never per request. */
  log?: LimiterLog;
}

/**
 * Work in flight counted in Redis, shared by every instance behind it. While Redis does not
 * answer, this instance counts by itself (per instance, as with no Redis at all) rather than
 * refuse or admit everything; after one failed command it stops asking Redis (so requests do
 * not each wait out a timeout) until a PING every REDIS_PROBE_MS, or a reconnect, answers.
 */
export class RedisInFlight implements InFlightSlots {
  readonly #redis: Scripted;
  readonly #local = new MemoryInFlight();
  readonly #leaseMs: number;
  readonly #renewMs: number;
  readonly #log: LimiterLog | undefined;
  #probe: NodeJS.Timeout | null = null;
  /** Until the first connection attempt has succeeded or failed: acquires wait for it. */
  #starting: Promise<void> | null;

  constructor(url: string, opts: RedisInFlightOptions = {}) {
    this.#leaseMs = opts.leaseMs ?? IN_FLIGHT_LEASE_MS;
    this.#renewMs = opts.renewMs ?? IN_FLIGHT_RENEW_MS;
    this.#log = opts.log;
    if (!(this.#renewMs > 0 && this.#renewMs < this.#leaseMs)) {
      throw new RangeError(`RedisInFlight: renewMs (${this.#renewMs}) must be positive and below leaseMs (${this.#leaseMs})`);
    }
    // The rate limiter's connection: while Redis is away a command fails at once (no offline
    // queue), so an acquire does not wait out a timeout before counting locally.
    const { redis, started } = requestPathRedis(url);
    this.#starting = started.then(() => {
      this.#starting = null;
    });
    // Failures are answered by counting locally; the connection's own errors need a listener.
    redis.on('error', () => undefined);
    redis.defineCommand('ndInflightAcquire', { numberOfKeys: 1, lua: ACQUIRE });
    redis.defineCommand('ndInflightRenew', { numberOfKeys: 1, lua: RENEW });
    this.#redis = redis as Scripted;
    redis.on('ready', () => this.#recovered());
  }

  /** Redis did not answer: count locally, and ask it now and then whether it is back. */
  #degrade(err: unknown): void {
    if (this.#probe !== null) return;
    this.#log?.warn({ err, redis: 'degraded' }, 'Work in flight is counted by this instance alone until Redis answers');
    this.#probe = setInterval(() => {
      this.#redis.ping().then(() => this.#recovered(), () => undefined);
    }, REDIS_PROBE_MS);
    this.#probe.unref();
  }

  #recovered(): void {
    if (!this.#stopProbe()) return;
    this.#log?.info({ redis: 'ok' }, 'Work in flight is counted across instances again: Redis is back');
  }

  /** Stops asking whether Redis is back; true if it was asking. */
  #stopProbe(): boolean {
    if (this.#probe === null) return false;
    clearInterval(this.#probe);
    this.#probe = null;
    return true;
  }

  /** True while this instance counts by itself because Redis did not answer. */
  get degraded(): boolean {
    return this.#probe !== null;
  }

  async tryAcquire(owner: string, max: number): Promise<(() => void) | null> {
    const key = IN_FLIGHT_KEY_PREFIX + owner;
    if (this.#starting) await this.#starting;
    const id = randomUUID();
    if (this.degraded) return this.#local.tryAcquire(owner, max);
    let taken: number;
    try {
      taken = await this.#redis.ndInflightAcquire(key, max, this.#leaseMs, id);
    } catch (err) {
      // The script may still have run after the client gave up on it: take back the lease it
      // may have made, so the account does not lose that slot for a whole lease.
      this.#redis.zrem(key, id).catch(() => undefined);
      this.#degrade(err);
      return this.#local.tryAcquire(owner, max);
    }
    if (taken !== 1) return null;
    const renew = setInterval(() => {
      this.#redis.ndInflightRenew(key, this.#leaseMs, id).catch(() => undefined);
    }, this.#renewMs);
    renew.unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      clearInterval(renew);
      // A release that does not reach Redis lapses with its lease.
      this.#redis.zrem(key, id).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    this.#stopProbe();
    this.#redis.disconnect();
  }
}
