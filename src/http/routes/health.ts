import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../../infra/store/store.js';
import type { RateLimiter } from '../../infra/ratelimit/limiter.js';

const Health = Type.Object({ status: Type.String(), redis: Type.Optional(Type.String()) });

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
      return reply.code(503).send({ status: 'database unavailable', ...redis() });
    }
  });
}
