import { MemoryInFlight } from './memory.js';
import type { RedisStateLog } from '../redis/request-path.js';
import { RedisInFlight } from './redis.js';
import type { InFlightSlots } from '../../domain/in-flight.js';

export { MemoryInFlight } from './memory.js';
export { RedisInFlight, IN_FLIGHT_KEY_PREFIX, IN_FLIGHT_LEASE_MS, IN_FLIGHT_RENEW_MS } from './redis.js';

/**
 * Shared through Redis when REDIS_URL is set, in this process otherwise; `log` hears when Redis
 * goes away (this instance then counts by itself) and comes back.
 */
export function createInFlightSlots(redisUrl: string | undefined, log?: RedisStateLog): InFlightSlots {
  return redisUrl === undefined ? new MemoryInFlight() : new RedisInFlight(redisUrl, { log });
}
