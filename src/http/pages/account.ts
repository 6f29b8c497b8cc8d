import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { EMAIL_MAX_CHARS } from '../../domain/accounts/service.js';
import { ValidationError } from '../../errors.js';
import type { PageDeps } from './deps.js';
import { LOGIN_LIMITS, type Throttle } from './throttle.js';
import { field, refusal, render } from './render.js';
import { clearSessionCookie, safeNext, setSessionCookie } from './session.js';
import { readCookie, setCookie } from './cookies.js';
import { withDevice, type ClientMeta, type SignedIn } from '../../domain/accounts/logins.js';
import { MIN_PASSWORD_LENGTH } from '../../domain/accounts/passwords.js';
import { clientKey } from '../plugins/auth.js';

function metaOf(request: FastifyRequest): ClientMeta {
  const ua = request.headers['user-agent'];
  return { ip: request.ip, userAgent: typeof ua === 'string' ? ua : '' };
}

/** The device cookie (see LoginService.trustedDevice): a year, renewed at every sign-in. */
const DEVICE_COOKIE = 'netdiag_device';
const DEVICE_COOKIE_MAX_AGE_S = 365 * 86_400;

/** The cookies of a sign-in (a login, a sign-up, a one-time link): the session, and this browser's device entry for the account. */
function signIn(request: FastifyRequest, reply: FastifyReply, signedIn: SignedIn): void {
  setSessionCookie(request, reply, signedIn);
  setCookie(request, reply, DEVICE_COOKIE, withDevice(readCookie(request, DEVICE_COOKIE), signedIn), DEVICE_COOKIE_MAX_AGE_S);
}

/** Sign in and out, set a password with a one-time link, sign up. */
export async function accountPages(app: FastifyInstance, deps: PageDeps, throttle: Throttle): Promise<void> {
  const csrf = app.csrfProtection;

  const loginPage = (request: FastifyRequest, reply: FastifyReply, data: { email?: string; next?: string; error?: string }) =>
    render(request, reply, 'login.eta', {
      title: 'Sign in',
      email: data.email ?? '',
      next: safeNext(data.next),
      signup: deps.logins.signupMode,
      ...(data.error ? { notice: { kind: 'error' as const, text: data.error } } : {}),
    });

  app.get('/login', { config: { page: 'public' } }, async (request, reply) => {
    const { next } = request.query as { next?: string };
    if (request.viewer) return reply.redirect(safeNext(next), 303);
    return loginPage(request, reply, { next });
  });

  app.post('/login', { config: { page: 'public' }, preHandler: csrf }, async (request, reply) => {
    const email = field(request.body, 'email', EMAIL_MAX_CHARS).trim().toLowerCase();
    const password = field(request.body, 'password', 1_024);
    const next = field(request.body, 'next', 512);
    const devices = readCookie(request, DEVICE_COOKIE);
    try {
      // A browser that signed in to this account before is throttled by its device cookie alone,
      // so strangers' failures (the e-mail's lockout, the address's window) never stop the owner.
      const device = email ? await deps.logins.trustedDevice(email, devices) : undefined;
      const client = device === undefined ? clientKey(request.ip) : `device:${device}`;
      const signedIn = await throttle.hashing(client, async () => {
        const now = deps.now();
        if (device !== undefined) {
          await throttle.attempt(`login-device:${device}`, LOGIN_LIMITS.perDevice, now, 'sign-in');
        } else {
          await throttle.attempt(`login-ip:${client}`, LOGIN_LIMITS.perAddress, now, 'sign-in');
          if (email) await throttle.attempt(`login-email:${email}`, LOGIN_LIMITS.perEmail, now, 'sign-in');
        }
        return deps.logins.login(email, password, metaOf(request));
      });
      signIn(request, reply, signedIn);
      return reply.redirect(safeNext(next), 303);
    } catch (err) {
      return loginPage(request, reply, { email, next, error: refusal(reply, err) });
    }
  });

  app.post('/logout', { config: { page: 'public' }, preHandler: csrf }, async (request, reply) => {
    if (request.viewer) await deps.logins.logout(request.viewer.session.id);
    clearSessionCookie(request, reply);
    return reply.redirect('/login', 303);
  });

  // One-time link: set (or reset) a password. The secret travels in the query; pages send no Referer.
  const passwordPage = (request: FastifyRequest, reply: FastifyReply, token: string, error?: string) =>
    render(request, reply, 'set-password.eta', {
      title: 'Set your password',
      token,
      min: MIN_PASSWORD_LENGTH,
      ...(error ? { notice: { kind: 'error' as const, text: error } } : {}),
    });

  app.get('/set-password', { config: { page: 'public' } }, async (request, reply) => {
    const token = String((request.query as { token?: unknown }).token ?? '');
    const link = await deps.logins.link(token, 'password');
    if (!link) {
      reply.code(404);
      return render(request, reply, 'error.eta', { title: 'Link not valid', status: 404, message: 'This link has expired or was used already. Ask the operator for a new one (netdiag account reset-password).' });
    }
    return passwordPage(request, reply, token);
  });

  app.post('/set-password', { config: { page: 'public' }, preHandler: csrf }, async (request, reply) => {
    const token = field(request.body, 'token', 100);
    const password = field(request.body, 'password', 1_024);
    const client = clientKey(request.ip);
    try {
      const signedIn = await throttle.hashing(client, async () => {
        await throttle.attempt(`link-ip:${client}`, LOGIN_LIMITS.signupPerAddress, deps.now(), 'password link');
        if (password !== field(request.body, 'confirm', 1_024)) throw new ValidationError('confirm', 'the two passwords differ');
        return deps.logins.setPasswordWithLink(token, password, metaOf(request));
      });
      signIn(request, reply, signedIn);
      return reply.redirect('/', 303);
    } catch (err) {
      return passwordPage(request, reply, token, refusal(reply, err));
    }
  });

  const signupPage = (request: FastifyRequest, reply: FastifyReply, data: { invite: string; email?: string; name?: string; error?: string; plan?: string | null; lockedEmail?: string | null }) =>
    render(request, reply, 'signup.eta', {
      title: 'Create an account',
      invite: data.invite,
      email: data.lockedEmail ?? data.email ?? '',
      lockedEmail: data.lockedEmail ?? null,
      name: data.name ?? '',
      plan: data.plan ?? null,
      min: MIN_PASSWORD_LENGTH,
      ...(data.error ? { notice: { kind: 'error' as const, text: data.error } } : {}),
    });

  const closedPage = (request: FastifyRequest, reply: FastifyReply) => {
    reply.code(403);
    return render(request, reply, 'error.eta', {
      title: 'Sign-up',
      status: 403,
      message:
        deps.logins.signupMode === 'invite'
          ? 'Accounts on this server are by invitation. Ask an administrator for an invitation link.'
          : 'Sign-up is closed on this server. Ask its operator for an account.',
    });
  };

  app.get('/signup', { config: { page: 'public' } }, async (request, reply) => {
    const invite = String((request.query as { invite?: unknown }).invite ?? '');
    if (invite) {
      const link = await deps.logins.link(invite, 'invite');
      if (!link) {
        reply.code(404);
        return render(request, reply, 'error.eta', { title: 'Invitation not valid', status: 404, message: 'This invitation has expired or was used already. Ask for a new one.' });
      }
      return signupPage(request, reply, { invite, plan: link.plan, lockedEmail: link.email });
    }
    if (deps.logins.signupMode !== 'open') return closedPage(request, reply);
    return signupPage(request, reply, { invite: '' });
  });

  app.post('/signup', { config: { page: 'public' }, preHandler: csrf }, async (request, reply) => {
    const invite = field(request.body, 'invite', 100);
    const email = field(request.body, 'email', EMAIL_MAX_CHARS);
    const name = field(request.body, 'name', 300);
    const password = field(request.body, 'password', 1_024);
    if (!invite && deps.logins.signupMode !== 'open') return closedPage(request, reply);
    const client = clientKey(request.ip);
    try {
      const signedIn = await throttle.hashing(client, async () => {
        await throttle.attempt(`signup-ip:${client}`, LOGIN_LIMITS.signupPerAddress, deps.now(), 'sign-up');
        if (password !== field(request.body, 'confirm', 1_024)) throw new ValidationError('confirm', 'the two passwords differ');
        return deps.logins.signUp({ email, name, password, ...(invite ? { invite } : {}) }, metaOf(request));
      });
      signIn(request, reply, signedIn);
      return reply.redirect('/tokens?welcome=1', 303);
    } catch (err) {
      const text = refusal(reply, err);
      const link = invite ? await deps.logins.link(invite, 'invite') : undefined;
      return signupPage(request, reply, { invite, email, name, error: text, plan: link?.plan ?? null, lockedEmail: link?.email ?? null });
    }
  });

}
