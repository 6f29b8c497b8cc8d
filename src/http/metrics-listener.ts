import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { NotFoundError } from '../errors.js';
import { metricsRoute, METRICS_PATH, type HttpMetrics } from './plugins/metrics.js';
import { sendError, toAppError } from './plugins/errors.js';
import { connectionOptions } from './plugins/connection.js';
import type { ConnectionTimeouts } from '../config.js';

export interface MetricsListener {
  /** The port it listens on (the one asked for, or the free one taken for 0). */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A process without the API's HTTP server (`netdiag worker`) serves its own GET /metrics here
 * (NETDIAG_METRICS_PORT): the probes it ran and the webhook deliveries it sent, which only its
 * registry counts. The same route, token check and envelope as the API's /metrics; nothing else
 * is served (404), and nothing reads a body.
 */
export async function listenForMetrics(opts: {
  metrics: HttpMetrics;
  token: string;
  host: string;
  port: number;
  timeouts: ConnectionTimeouts;
}): Promise<MetricsListener> {
  const app: FastifyInstance = Fastify({ logger: false, ...connectionOptions(opts.timeouts) });
  app.setErrorHandler((error: FastifyError, _request, reply) => sendError(reply, toAppError(error)));
  app.setNotFoundHandler((request, reply) => sendError(reply, NotFoundError.endpoint(request.method, request.url.split('?')[0] ?? METRICS_PATH)));
  await metricsRoute(app, { metrics: opts.metrics, token: opts.token });
  await app.listen({ host: opts.host, port: opts.port });
  const address = app.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : opts.port,
    close: () => app.close(),
  };
}
