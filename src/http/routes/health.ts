import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../../domain/store.js';
import type { RateLimiter } from '../../domain/usage/rate-limit.js';
import { DATABASE_RETRY_AFTER_S } from '../../infra/store/pg-availability.js';

/** `status` says it all; each dependency that is not fine adds its own field (`database`, `redis`). */
const Health = Type.Object({ status: Type.String(), database: Type.Optional(Type.String()), redis: Type.Optional(Type.String()) });

/** Liveness and readiness for orchestrators: outside /api, no token, no rate limit. */
export async function healthRoutes(app: FastifyInstance, store: Store, limiter: RateLimiter | null = null): Promise<void> {
  // Redis away is no reason to leave the rotation (each instance then limits by itself): 200, said in the body.
  const redis = () => (limiter?.redisState?.() === 'degraded' ? { redis: 'degraded' } : {});
  app.get('/healthz', { schema: { hide: true, response: { 200: Health } } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true, response: { 200: Health, 503: Health } } }, async (_request, reply) => {
    try {
      await store.ping();
      return { status: 'ready', ...redis() };
    } catch {
      // Answered at once while the store's breaker is open: orchestrators poll this.
      return reply
        .code(503)
        .header('retry-after', String(DATABASE_RETRY_AFTER_S))
        .send({ status: 'database unavailable', database: 'unreachable', ...redis() });
    }
  });
}
