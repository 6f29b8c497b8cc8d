import { fileURLToPath } from 'node:url';
import type { FastifyError, FastifyInstance, RouteOptions } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyStatic from '@fastify/static';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import { AppError, InternalError, ServiceUnavailableError } from '../../errors.js';
import { toAppError } from '../plugins/errors.js';
import type { PageDeps } from './deps.js';
import { registerPageSecurity } from './security.js';
import { CSRF_PLUGIN_OPTIONS, registerCsrfCookie } from './cookies.js';
import { registerSessions } from './session.js';
import { accountPages } from './account.js';
import { overviewPages } from './overview.js';
import { tokenPages } from './tokens.js';
import { settingsPages } from './settings.js';
import { adminPages } from './admin.js';
import { jobPages } from './jobs.js';
import { checkPages } from './checks.js';
import { render } from './render.js';
import { Throttle } from './throttle.js';

/** Form bodies are small: a password change is the largest. */
export const FORM_BODY_LIMIT_BYTES = 16 * 1024;
/** Assets change only with a new release; an hour keeps pages fast without pinning an old stylesheet long. */
const ASSET_CACHE_CONTROL = 'public, max-age=3600';
const VIEWS_DIR = fileURLToPath(new URL('.', import.meta.url));
const ASSETS_DIR = fileURLToPath(new URL('./assets/', import.meta.url));

function hideFromOpenApi(route: RouteOptions): void {
  route.schema = { ...(route.schema ?? {}), hide: true };
}

/**
 * The account dashboard: server-rendered pages at `/` in their own Fastify scope, so that its
 * cookie, CSRF, form parser, CSP and HTML errors never touch `/api`, which accepts bearer tokens
 * only and answers JSON.
 */
export async function registerPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  await app.register(async (pages) => {
    // Pages are not the API: none of them belongs in the OpenAPI document.
    pages.addHook('onRoute', hideFromOpenApi);
    pages.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES }, (_req, body, done) => {
      // Own properties only: a field named __proto__ is a field, not the object's prototype.
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    await pages.register(fastifyCookie);
    registerCsrfCookie(pages);
    await pages.register(fastifyCsrf, CSRF_PLUGIN_OPTIONS);
    await pages.register(fastifyView, {
      engine: { eta: new Eta({ views: VIEWS_DIR, cache: true, autoEscape: true, autoTrim: false }) },
      root: VIEWS_DIR,
      production: true,
    });
    registerPageSecurity(pages, deps.config.publicUrl);
    registerSessions(pages, deps.logins);

    // The API's mapping decides status and headers (a 503 with Retry-After while the database is
    // away, a 429's Retry-After); the page says it in words a person reads.
    pages.setErrorHandler((error: FastifyError, request, reply) => {
      const appError = toAppError(error);
      // A plugin's own 4xx (CSRF's 403) keeps its status; the API would call it a 400.
      const own = !(error instanceof AppError) && typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500;
      const status = own ? error.statusCode! : appError.status;
      let message = appError.message;
      if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') {
        message = 'This form has expired or did not come from this site. Go back, reload the page and send it again.';
      } else if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        message = 'The form was larger than this server accepts.';
      } else if (appError instanceof ServiceUnavailableError) {
        message = 'The database cannot be reached just now. Try again in a few seconds.';
      } else if (appError instanceof InternalError) {
        message = 'Something went wrong on our side. Try again in a moment.';
        request.log.error({ err: error }, 'dashboard page failed');
      } else if (!(error instanceof AppError)) {
        message = 'The request could not be understood. Go back and try again.';
      }
      if (appError.headers) reply.headers(appError.headers);
      reply.code(status);
      return render(request, reply, 'error.eta', { title: status >= 500 ? 'Error' : 'Not possible', status, message });
    });

    // One throttle for every form that hashes a password, so its bound on hashes per client holds across them.
    const throttle = new Throttle(deps.loginLimiter);
    await accountPages(pages, deps, throttle);
    await overviewPages(pages, deps);
    await tokenPages(pages, deps);
    await settingsPages(pages, deps, throttle);
    await adminPages(pages, deps);
    await jobPages(pages, deps);
    await checkPages(pages, deps);
  });
  // Styles and scripts are files of this package, never a CDN's; outside the pages' scope, so no
  // session lookup for a stylesheet.
  await app.register(async (assets) => {
    assets.addHook('onRoute', hideFromOpenApi);
    assets.addHook('onSend', (_request, reply, payload, done) => {
      reply.header('cache-control', ASSET_CACHE_CONTROL);
      done(null, payload);
    });
    await assets.register(fastifyStatic, { root: ASSETS_DIR, prefix: '/assets/', decorateReply: false, index: false, list: false });
  });
}
