import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RequestPathRedis, type RedisStateLog } from '../redis/request-path.js';
import { MemoryInFlightSlots } from './memory.js';
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
  ndInFlightAcquire(key: string, max: number, leaseMs: number, id: string): Promise<number>;
  ndInFlightRenew(key: string, leaseMs: number, id: string): Promise<number>;
};

export interface RedisInFlightSlotsOptions {
  leaseMs?: number;
  renewMs?: number;
  /** Where it says that it counts by itself and that Redis is back: one line each, never per request. */
  log?: RedisStateLog;
}

/**
 * Work in flight counted in Redis, shared by every instance behind it. While Redis does not
 * answer, this instance counts by itself (per instance, as with no Redis at all) rather than
 * refuse or admit everything, until Redis answers again (RequestPathRedis).
 */
export class RedisInFlightSlots implements InFlightSlots {
  readonly #connection: RequestPathRedis;
  readonly #redis: Scripted;
  readonly #local = new MemoryInFlightSlots();
  readonly #leaseMs: number;
  readonly #renewMs: number;

  constructor(url: string, opts: RedisInFlightSlotsOptions = {}) {
    this.#leaseMs = opts.leaseMs ?? IN_FLIGHT_LEASE_MS;
    this.#renewMs = opts.renewMs ?? IN_FLIGHT_RENEW_MS;
    if (!(this.#renewMs > 0 && this.#renewMs < this.#leaseMs)) {
      throw new RangeError(`RedisInFlightSlots: renewMs (${this.#renewMs}) must be positive and below leaseMs (${this.#leaseMs})`);
    }
    const log = opts.log;
    this.#connection = new RequestPathRedis(url, {
      degraded: (err) => log?.warn({ err, redis: 'degraded' }, 'Work in flight is counted by this instance alone until Redis answers'),
      recovered: () => log?.info({ redis: 'ok' }, 'Work in flight is counted across instances again: Redis is back'),
    });
    const redis = this.#connection.client;
    redis.defineCommand('ndInFlightAcquire', { numberOfKeys: 1, lua: ACQUIRE });
    redis.defineCommand('ndInFlightRenew', { numberOfKeys: 1, lua: RENEW });
    this.#redis = redis as Scripted;
  }

  /** True while this instance counts by itself because Redis did not answer. */
  get degraded(): boolean {
    return this.#connection.degraded;
  }

  async tryAcquire(owner: string, max: number): Promise<(() => void) | null> {
    const key = IN_FLIGHT_KEY_PREFIX + owner;
    await this.#connection.started();
    if (this.degraded) return this.#local.tryAcquire(owner, max);
    const id = randomUUID();
    let taken: number;
    try {
      taken = await this.#redis.ndInFlightAcquire(key, max, this.#leaseMs, id);
    } catch (err) {
      // The script may still have run after the client gave up on it: take back the lease it
      // may have made, so the account does not lose that slot for a whole lease.
      this.#redis.zrem(key, id).catch(() => undefined);
      this.#connection.degrade(err);
      return this.#local.tryAcquire(owner, max);
    }
    if (taken !== 1) return null;
    const renew = setInterval(() => {
      this.#redis.ndInFlightRenew(key, this.#leaseMs, id).catch(() => undefined);
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
    this.#connection.close();
    this.#redis.disconnect();
  }
}
