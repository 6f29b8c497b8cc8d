import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../../infra/store/store.js';

const Health = Type.Object({ status: Type.String() });

/** Liveness and readiness for orchestrators: outside /api, no token, no rate limit. */
export async function healthRoutes(app: FastifyInstance, store: Store): Promise<void> {
  app.get('/healthz', { schema: { hide: true, response: { 200: Health } } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true, response: { 200: Health, 503: Health } } }, async (_request, reply) => {
    try {
      await store.ping();
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'database unavailable' });
    }
  });
}
