import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Every cookie of the dashboard goes through here, so that one rule holds for all of them: over
 * HTTPS (TLS, or a proxy in NETDIAG_TRUST_PROXY saying `X-Forwarded-Proto: https`: Fastify's
 * `request.protocol`) a cookie is `Secure` and `__Host-` prefixed, so no subdomain and no
 * plain-HTTP page can set or read it; over plain HTTP (a laptop, a test) it is a normal cookie.
 * All are HttpOnly, SameSite=Lax, path `/`, without Domain.
 */
export function isHttps(request: FastifyRequest): boolean {
  return request.protocol === 'https';
}

/** The name a cookie has on this request: `__Host-<name>` over HTTPS, `<name>` over plain HTTP. */
export function cookieName(request: FastifyRequest, name: string, plainName = name): string {
  return isHttps(request) ? `__Host-${name}` : plainName;
}

function optionsOf(request: FastifyRequest) {
  return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: isHttps(request) };
}

/** The cookie's value on this request, under this protocol's name only (a plain one never counts over HTTPS). */
export function readCookie(request: FastifyRequest, name: string, plainName = name): string | undefined {
  return request.cookies[cookieName(request, name, plainName)];
}

/** Sets a cookie for `maxAgeS` seconds; undefined: until the browser closes. */
export function setCookie(request: FastifyRequest, reply: FastifyReply, name: string, value: string, maxAgeS: number | undefined, plainName = name): void {
  reply.setCookie(cookieName(request, name, plainName), value, { ...optionsOf(request), ...(maxAgeS === undefined ? {} : { maxAge: maxAgeS }) });
}

export function clearCookie(request: FastifyRequest, reply: FastifyReply, name: string, plainName = name): void {
  reply.clearCookie(cookieName(request, name, plainName), optionsOf(request));
}

/** The CSRF secret's cookie: `_csrf` over plain HTTP, as it always was. */
const CSRF_COOKIE = 'netdiag_csrf';
const CSRF_PLAIN_COOKIE = '_csrf';

/** Where @fastify/csrf-protection keeps its secret on a request (its `sessionPlugin: '@fastify/session'` mode). */
interface CsrfHolder {
  _csrf?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The CSRF secret of this request, read from and written back to the cookie of its protocol. */
    session: CsrfHolder;
  }
}

/**
 * @fastify/csrf-protection names its cookie once, at registration; the name here depends on the
 * request's protocol. So the plugin keeps its secret on `request.session` (its session mode),
 * filled from this protocol's cookie, and a new secret is written back to that cookie.
 */
export const CSRF_PLUGIN_OPTIONS = { sessionPlugin: '@fastify/session', sessionKey: '_csrf' } as const;

export function registerCsrfCookie(app: FastifyInstance): void {
  app.decorateRequest('session', null as unknown as CsrfHolder);
  app.addHook('onRequest', (request, _reply, done) => {
    const secret = readCookie(request, CSRF_COOKIE, CSRF_PLAIN_COOKIE);
    request.session = secret ? { _csrf: secret } : {};
    done();
  });
}

/** A CSRF token for a page's forms; a secret made for it now is set in this protocol's cookie. */
export function csrfToken(request: FastifyRequest, reply: FastifyReply): string {
  const before = request.session?._csrf;
  const token = reply.generateCsrf();
  const after = request.session._csrf;
  if (after !== undefined && after !== before) setCookie(request, reply, CSRF_COOKIE, after, undefined, CSRF_PLAIN_COOKIE);
  return token;
}

/** Forgets the CSRF secret (at a login): a token minted before it is worthless after it. */
export function renewCsrf(request: FastifyRequest, reply: FastifyReply): void {
  request.session = {};
  clearCookie(request, reply, CSRF_COOKIE, CSRF_PLAIN_COOKIE);
}
