import type { RouteOptions } from 'fastify';
import { API_PREFIX, DOCS_PREFIX } from './plugins/auth.js';
import { errorResponse, type RouteErrorStatus } from './schemas/errors.js';

interface RouteSchema {
  hide?: boolean;
  body?: unknown;
  querystring?: unknown;
  params?: unknown;
  headers?: unknown;
  response?: Record<string, unknown>;
}

/**
 * The error statuses a route answers, from what it takes (docs/errors.md's table): a body can be
 * malformed, too large or not JSON; a query, path or header can break its schema; a token can be
 * missing or its account suspended; a path parameter can name nothing; every route can be
 * limited, fail, or lose its database.
 */
export function errorStatusesOf(schema: RouteSchema, isPublic: boolean): RouteErrorStatus[] {
  const statuses = new Set<RouteErrorStatus>();
  if (schema.body || schema.querystring || schema.params || schema.headers) statuses.add(400);
  if (!isPublic) statuses.add(401).add(403);
  if (schema.params) statuses.add(404);
  if (schema.body) statuses.add(413).add(415);
  statuses.add(429).add(500).add(503);
  return [...statuses];
}

/**
 * An onRoute hook: every documented /api route answers its error statuses with their bodies
 * (src/http/schemas/errors.ts), each status apart, so the serializer and the document know them
 * all. Statuses the route names itself (a 409) are kept.
 */
export function addErrorResponses(route: RouteOptions): void {
  const schema = route.schema as RouteSchema | undefined;
  if (!schema?.response || schema.hide) return;
  if (!route.url.startsWith(`${API_PREFIX}/`) || route.url.startsWith(DOCS_PREFIX)) return;
  const errors = Object.fromEntries(errorStatusesOf(schema, route.config?.public === true).map((status) => [status, errorResponse(status)]));
  route.schema = { ...schema, response: { ...errors, ...schema.response } };
}
