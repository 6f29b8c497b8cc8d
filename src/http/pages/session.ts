import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Account, Session } from '../../domain/accounts/repositories.js';
import type { LoginService, SignedIn } from '../../domain/accounts/logins.js';
import { SESSION_MAX_MS } from '../../domain/accounts/logins.js';
import { render } from './render.js';
import { clearCookie, readCookie, renewCsrf, setCookie } from './cookies.js';

/** Who a page is for. `member` (the default): a signed-in account; `admin`: an admin's; `public`: anyone. */
export type PageAccess = 'public' | 'member' | 'admin';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in account and its session on dashboard pages; null when nobody is signed in. */
    viewer: { account: Account; session: Session } | null;
  }
  interface FastifyContextConfig {
    page?: PageAccess;
  }
}

const SESSION_COOKIE = 'netdiag_session';

/** The session cookie's secret on this request, if it carries one. */
export function sessionSecret(request: FastifyRequest): string | undefined {
  return readCookie(request, SESSION_COOKIE);
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, signedIn: SignedIn): void {
  setCookie(request, reply, SESSION_COOKIE, signedIn.secret, Math.floor(SESSION_MAX_MS / 1000));
  // A new CSRF secret with the new session: a token minted before the login is worthless after it.
  renewCsrf(request, reply);
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  clearCookie(request, reply, SESSION_COOKIE);
}

/**
 * A plain local path: `/`, then printable ASCII only (no space, no control character, nothing a
 * Location header cannot carry), never `//host` or a backslash (`/\\host` is another origin to
 * a browser).
 */
const LOCAL_PATH = /^\/(?:[!-.0-[\]-~][!-[\]-~]*)?$/;

/** The path a page goes back to: only a plain local path of this site, else the overview. */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || next.length > 512 || !LOCAL_PATH.test(next)) return '/';
  return next;
}

/**
 * Loads the viewer from the session cookie and decides access by the route that matched: a
 * member page without a session redirects to the login, an admin page for a non-admin is a 403.
 */
export function registerSessions(app: FastifyInstance, logins: LoginService): void {
  app.decorateRequest('viewer', null);
  app.addHook('onRequest', async (request, reply) => {
    const secret = sessionSecret(request);
    request.viewer = (await logins.session(secret)) ?? null;
    const access = request.routeOptions.config.page ?? 'member';
    if (access === 'public') return;
    if (request.viewer === null) {
      if (secret !== undefined) clearSessionCookie(request, reply);
      const next = request.method === 'GET' ? request.url : '/';
      return reply.redirect(`/login?next=${encodeURIComponent(next)}`, 303);
    }
    if (access === 'admin' && !request.viewer.account.is_admin) {
      reply.code(403);
      return render(request, reply, 'error.eta', { title: 'Not allowed', status: 403, message: 'This page is for administrators of this server.' });
    }
  });
}
