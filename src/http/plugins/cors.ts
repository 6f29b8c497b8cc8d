import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { pathOf } from '../route-index.js';
import { API_PREFIX } from './auth.js';

/** What a browser page may send to /api besides the safelisted headers: the token, JSON, `Prefer: respond-async`, a job's ETag. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Prefer', 'If-None-Match'] as const;
/** What a page may read of an answer besides the safelisted headers: the rate windows, when to retry, a job's place and version. */
export const CORS_EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'Retry-After',
  'Location',
  'ETag',
  'Preference-Applied',
  'X-Request-Id',
] as const;
/** Every method an /api route takes. */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'DELETE'] as const;
/** How long a browser may reuse a preflight's answer; Chromium keeps one at most 2 hours anyway. */
export const CORS_MAX_AGE_S = 7_200;

const isApi = (url: string): boolean => {
  const path = pathOf(url);
  return path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);
};

/**
 * CORS for /api, for the origins of NETDIAG_CORS_ORIGINS (`*` for any); none configured, nothing is
 * registered and no answer carries a CORS header. The API's token travels in `Authorization`, never
 * in a cookie, so no credentials mode is offered. The dashboard, the judge, /mcp and /metrics get no
 * CORS whatever the setting: pages are same-origin, and the judge must look like any web server.
 *
 * Registered ahead of the token check and the shutdown's 503: a preflight carries no token and is
 * answered at once (204), and an error answer (401, 429, 503) carries the headers too, so the page
 * can read it. A request from an origin not listed is answered as without CORS.
 */
export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  if (origins.length === 0) return;
  const anyOrigin = origins.includes('*');
  const listed = new Set(origins);
  const on: FastifyCorsOptions = {
    // Listed origins are checked below; the one that asked is named back (with Vary: Origin).
    origin: anyOrigin ? '*' : true,
    methods: [...CORS_METHODS],
    allowedHeaders: [...CORS_ALLOWED_HEADERS],
    exposedHeaders: [...CORS_EXPOSED_HEADERS],
    maxAge: CORS_MAX_AGE_S,
    credentials: false,
  };
  const off: FastifyCorsOptions = { origin: false };
  const optionsFor = (request: FastifyRequest): FastifyCorsOptions => {
    const origin = request.headers.origin;
    if (origin === undefined || !isApi(request.url)) return off;
    if (!anyOrigin && !listed.has(origin)) return off;
    // An OPTIONS that is no preflight is what it is without CORS: a 405 naming the methods.
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] === undefined) return off;
    return on;
  };
  await app.register(fastifyCors, {
    hook: 'onRequest',
    delegator: (request, callback) => callback(null, optionsFor(request as FastifyRequest)),
  });
}
