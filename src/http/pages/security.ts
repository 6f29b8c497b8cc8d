import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ForbiddenError } from '../../errors.js';

/**
 * What every dashboard page is sent with. Nothing is loaded from another origin and no inline
 * script runs: scripts and styles come from /assets only, forms post only here, and no other
 * site may frame a page (clickjacking) or read where a link came from (the one-time links carry
 * secrets in their query).
 */
export const PAGE_SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  // Not no-referrer: with it a browser sends `Origin: null` on form posts, and the Origin check
  // below could not tell our forms from a sandboxed frame's. same-origin keeps the one-time links'
  // secrets from other sites all the same.
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
} as const;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The origin a browser names when it sends a form from one of our pages. */
export function ownOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/**
 * A state-changing request must come from a page of this server: when the browser says where
 * the form came from (Origin, else Referer, else Sec-Fetch-Site), it must be here or at
 * NETDIAG_PUBLIC_URL. This stands beside the CSRF token, not instead of it.
 */
export function checkOrigin(request: FastifyRequest, publicUrl: string | undefined): void {
  if (SAFE_METHODS.has(request.method)) return;
  const allowed = new Set([ownOrigin(request)]);
  if (publicUrl) allowed.add(new URL(publicUrl).origin);
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== '') {
    if (!allowed.has(origin)) throw new ForbiddenError(`this form was sent from ${origin}, not from this site; open the page here and send it again`);
    return;
  }
  const referer = request.headers.referer;
  if (typeof referer === 'string' && referer !== '') {
    let from: string | undefined;
    try {
      from = new URL(referer).origin;
    } catch {
      from = undefined;
    }
    if (from === undefined || !allowed.has(from)) throw new ForbiddenError('this form was not sent from a page of this site; open the page here and send it again');
    return;
  }
  if (request.headers['sec-fetch-site'] === 'cross-site') throw new ForbiddenError('this form was sent from another site; open the page here and send it again');
}

export function registerPageSecurity(app: FastifyInstance, publicUrl: string | undefined): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(PAGE_SECURITY_HEADERS);
    try {
      checkOrigin(request, publicUrl);
      done();
    } catch (err) {
      done(err as Error);
    }
  });
}
