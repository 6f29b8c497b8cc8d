import { MemoryInFlightSlots } from './memory.js';
import type { RedisStateLog } from '../redis/request-path.js';
import { RedisInFlightSlots } from './redis.js';
import type { InFlightSlots } from '../../domain/in-flight.js';

export { MemoryInFlightSlots } from './memory.js';
export { RedisInFlightSlots, IN_FLIGHT_KEY_PREFIX, IN_FLIGHT_LEASE_MS, IN_FLIGHT_RENEW_MS } from './redis.js';

/**
 * Shared through Redis when REDIS_URL is set, in this process otherwise; `log` hears when Redis
 * goes away (this instance then counts by itself) and comes back.
 */
export function createInFlightSlots(redisUrl: string | undefined, log?: RedisStateLog): InFlightSlots {
  return redisUrl === undefined ? new MemoryInFlightSlots() : new RedisInFlightSlots(redisUrl, { log });
}
