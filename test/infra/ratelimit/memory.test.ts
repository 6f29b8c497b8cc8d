import { MemoryRateLimiter } from '../../../src/infra/ratelimit/memory.js';
import { rateLimiterSuite } from './suite.js';

rateLimiterSuite('memory', async () => new MemoryRateLimiter());
