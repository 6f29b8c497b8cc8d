import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RateLimitError, UnauthorizedError } from '../../errors.js';
import { bearerCredential } from '../../domain/accounts/service.js';

/** Where the operator's metrics are served: outside /api, not an API call, not in the document. */
export const METRICS_PATH = '/metrics';
/** The `route` label of a request no route matched (a 404 or 405): one series, whatever the path. */
export const UNMATCHED_ROUTE = 'unmatched';

/** What the HTTP layer tells the metrics, and asks of them (src/infra/metrics implements it). */
export interface HttpMetrics {
  request(route: string, method: string, status: number, seconds: number): void;
  /** A 429: `window` is its details.window. */
  rateLimited(window: unknown): void;
  exposition(): Promise<{ contentType: string; body: string }>;
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * `Authorization: Bearer <token>` (read as the API's tokens are) compared with the metrics token
 * in constant time: both sides are hashed first, so neither the length nor the content of the
 * token shows in the time taken.
 */
function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const credential = bearerCredential(header);
  return credential !== null && timingSafeEqual(digest(credential), expected);
}

/** A 429 is counted by its window (details.window): by the hook below, and by calls made inside a request (src/http/call-steps.ts). */
export function countRateLimited(metrics: Pick<HttpMetrics, 'rateLimited'> | null, error: unknown): void {
  if (metrics && error instanceof RateLimitError) metrics.rateLimited(error.details?.window);
}

/**
 * What GET /metrics (docs/operations.md) counts: every answered request by its route TEMPLATE
 * (never the raw path, so junk paths add no series), its duration, and every 429 by window.
 * Scrapes themselves are not counted. Without metrics (no token configured, AppDeps.httpMetrics null) nothing is registered: no hook
 * runs, and /metrics is the ordinary 404 of a path that does not exist. Register early (the
 * hooks see every route); metricsRoute adds the route itself among the other non-API routes.
 */
export function registerMetrics(app: FastifyInstance, metrics: HttpMetrics | null): void {
  if (!metrics) return;

  // A plain hook: nothing here waits.
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const route = request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE);
    if (route !== METRICS_PATH) metrics.request(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  // Every 429 passes here on its way to the error handler: the limiter's windows and work in flight alike.
  app.addHook('onError', (_request, _reply, error, done) => {
    countRateLimited(metrics, error);
    done();
  });
}

/** GET /metrics itself: only with `Authorization: Bearer <NETDIAG_METRICS_TOKEN>`, else a 401. */
export async function metricsRoute(app: FastifyInstance, opts: { metrics: HttpMetrics | null; token: string | undefined }): Promise<void> {
  const { metrics, token } = opts;
  if (!metrics || token === undefined) return;
  const expected = digest(token);
  // Outside /api (no account, no limiter, no usage) and out of the OpenAPI document, like /healthz.
  app.get(METRICS_PATH, { schema: { hide: true } }, async (request, reply) => {
    if (!bearerMatches(request.headers.authorization, expected)) {
      throw new UnauthorizedError('the metrics token is required: send "Authorization: Bearer <NETDIAG_METRICS_TOKEN>"');
    }
    const { contentType, body } = await metrics.exposition();
    return reply.type(contentType).send(body);
  });
}
