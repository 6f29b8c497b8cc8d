import type { FastifyReply, FastifyRequest } from 'fastify';
import { publicBaseUrl, withoutTrailingSlashes, type Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { csrfToken } from './cookies.js';

/** A page's own data; the layout adds who is signed in, the CSRF token for its forms, and the nav. */
export interface PageData {
  title: string;
  /** The nav entry to mark as the current page. */
  nav?: 'overview' | 'checks' | 'tokens' | 'settings' | 'admin' | 'jobs';
  /** A running job's page: reload every this many seconds where no script runs (the script streams instead). */
  refresh?: number | null;
  /** A message above the page: what the last form did, or why it did not. */
  notice?: { kind: 'ok' | 'error'; text: string };
  /** Extra stylesheets of this page, file names under /assets/ (e.g. 'overview.css'). */
  styles?: string[];
  [key: string]: unknown;
}

export function render(request: FastifyRequest, reply: FastifyReply, template: string, data: PageData): FastifyReply {
  return reply.type('text/html; charset=utf-8').view(template, {
    ...data,
    viewer: request.viewer ?? null,
    csrf: formToken(request, reply),
    path: request.url,
  });
}

/** A CSRF token for the page's forms; '' on an error page reached before the cookies were read. */
function formToken(request: FastifyRequest, reply: FastifyReply): string {
  try {
    return csrfToken(request, reply);
  } catch {
    return '';
  }
}

/** A form's field as a string ('' when absent or not a string): a form body is hostile input. */
export function field(body: unknown, name: string, max = 1_000): string {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value.slice(0, max) : '';
}

// In src/lib: the operations' result views (src/operations/shared/view.ts) write dates so too.
export { pageTime } from '../../lib/time.js';

/** Addresses a listener binds to that nobody can browse to: never the host of a link. */
const WILDCARD_HOSTS = new Set(['0.0.0.0', '[::]', '::', '']);

/**
 * The base of the links a page hands out (invitations, the curl line of a new token).
 * NETDIAG_PUBLIC_URL when the operator set it: it is the address people reach the server at.
 * Without it, docs/api.md's default is http://localhost:PORT, but that is only right on this machine
 * and with the configured port (a server behind a port mapping, or one bound to port 0, differs).
 * The viewer's own browser just reached this page, so the origin it used (`protocol://Host`) is a
 * better guess; the Host header is the viewer's own request's, so at worst it misleads
 * themself. A wildcard host (someone browsed to http://0.0.0.0:8080) is no address for anyone
 * else: then the documented default.
 */
export function linkBase(request: FastifyRequest, config: Pick<Config, 'publicUrl' | 'port' | 'host'>): string {
  if (config.publicUrl) return withoutTrailingSlashes(config.publicUrl);
  const host = request.host;
  const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
  if (WILDCARD_HOSTS.has(hostname)) return publicBaseUrl({ ...config, host: '0.0.0.0' });
  return `${request.protocol}://${host}`;
}

/**
 * A form's refusal the person can act on (a 4xx AppError): its status and headers (a throttle's
 * Retry-After) go on the reply and its message is returned, for the form to show again. Anything
 * else is rethrown, for the pages' error handler.
 */
export function refusal(reply: FastifyReply, err: unknown): string {
  if (!(err instanceof AppError) || err.status >= 500) throw err;
  if (err.headers) reply.headers(err.headers);
  reply.code(err.status);
  return err.message;
}
