import { MemoryInFlight } from './memory.js';
import { RedisInFlight } from './redis.js';
import type { InFlightSlots } from './slots.js';

export { MemoryInFlight } from './memory.js';
export { RedisInFlight, IN_FLIGHT_KEY_PREFIX, IN_FLIGHT_LEASE_MS, IN_FLIGHT_RENEW_MS } from './redis.js';
export type { InFlightSlots } from './slots.js';

/** Shared through Redis when REDIS_URL is set, in this process otherwise. */
export function createInFlightSlots(redisUrl: string | undefined): InFlightSlots {
  return redisUrl === undefined ? new MemoryInFlight() : new RedisInFlight(redisUrl);
}
