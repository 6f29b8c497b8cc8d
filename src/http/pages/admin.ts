import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../errors.js';
import { EMAIL_MAX_CHARS, MAX_SEARCH_LENGTH } from '../../domain/accounts/service.js';
import { inviteLinkUrl } from '../../domain/accounts/logins.js';
import { PLAN_NAMES } from '../../domain/accounts/plans.js';
import type { Account, AuthLink } from '../../domain/accounts/repositories.js';
import type { PageDeps } from './deps.js';
import { field, linkBase, pageTime, refusal, render } from './render.js';
import { keepFlash, takeFlash } from './flash.js';

/** Accounts one page lists; a search narrows the rest down. */
export const ADMIN_LIST_LIMIT = 100;
/** Recent invitations the page lists. */
export const ADMIN_INVITES_LIMIT = 50;
const ID_PATTERN = /^[1-9][0-9]{0,15}$/;

type Notice = { kind: 'ok' | 'error'; text: string };
type Invite = { link: string; email: string | null; plan: string; expires_at: string };
/** What a change leaves for the admin page its redirect leads to. */
type Done = { text: string; invite?: Invite };

/** An invitation as the list shows it: never its secret (only its hash is stored anyway). */
interface InvitationRow {
  who: string | null;
  plan: string;
  created_at: string;
  expires_at: string;
  state: 'used' | 'expired' | 'open';
  used_at: string | null;
}

function invitationRow(link: AuthLink, now: number): InvitationRow {
  return {
    who: link.email,
    plan: link.plan ?? '',
    created_at: link.created_at,
    expires_at: link.expires_at,
    state: link.used_at !== null ? 'used' : Date.parse(link.expires_at) <= now ? 'expired' : 'open',
    used_at: link.used_at,
  };
}

/** The account id of a route, or undefined for anything but a positive integer. */
function idOf(request: FastifyRequest): number | undefined {
  const raw = (request.params as { id?: unknown }).id;
  if (typeof raw !== 'string' || !ID_PATTERN.test(raw)) return undefined;
  const id = Number(raw);
  return Number.isSafeInteger(id) ? id : undefined;
}

/** Administrators: every account (plan, suspend / resume) and invitations. */
export async function adminPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  const csrf = app.csrfProtection;

  const adminPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    data: { q: string; notice?: Notice; invite?: Invite; form?: { email: string; plan: string } },
  ) => {
    const found = await deps.accounts.searchAccounts(data.q, ADMIN_LIST_LIMIT + 1);
    const now = deps.now();
    const invitations = (await deps.logins.invitations(ADMIN_INVITES_LIMIT)).map((link) => invitationRow(link, now));
    return render(request, reply, 'admin.eta', {
      title: 'Admin',
      nav: 'admin',
      styles: ['admin.css'],
      q: data.q,
      accounts: found.slice(0, ADMIN_LIST_LIMIT),
      more: found.length > ADMIN_LIST_LIMIT,
      limit: ADMIN_LIST_LIMIT,
      plans: PLAN_NAMES,
      selfId: request.viewer!.account.id,
      invitations,
      invite: data.invite ?? null,
      form: data.form ?? { email: '', plan: 'free' },
      publicUrlSet: Boolean(deps.config.publicUrl),
      signupMode: deps.logins.signupMode,
      pageTime,
      ...(data.notice ? { notice: data.notice } : {}),
    });
  };

  const notFound = (request: FastifyRequest, reply: FastifyReply, what: string) => {
    reply.code(404);
    return render(request, reply, 'error.eta', { title: 'Not found', status: 404, message: `There is no account ${what}. It may have been listed from an old page.` });
  };

  /** After a change: a 303 to the admin page (with the search kept), which says what was done, once. */
  const done = (request: FastifyRequest, reply: FastifyReply, q: string, what: Done) => {
    keepFlash(request, reply, 'admin', what);
    return reply.redirect(q ? `/admin?${new URLSearchParams({ q })}` : '/admin', 303);
  };

  /**
   * Runs an account change: done → a 303 to the page, which says what changed; a refusal the admin can
   * act on (bad plan, suspending oneself) → the page with the message and its 4xx status; an
   * unknown account → the 404 page. Anything else is the error handler's.
   */
  const change = async (request: FastifyRequest, reply: FastifyReply, run: (id: number) => Promise<string>) => {
    const q = field(request.body, 'q', MAX_SEARCH_LENGTH);
    const id = idOf(request);
    if (id === undefined) return notFound(request, reply, 'with that id');
    try {
      const text = await run(id);
      return done(request, reply, q, { text });
    } catch (err) {
      if (err instanceof NotFoundError) return notFound(request, reply, `with id ${id}`);
      return adminPage(request, reply, { q, notice: { kind: 'error', text: refusal(reply, err) } });
    }
  };

  app.get('/admin', { config: { page: 'admin' } }, async (request, reply) => {
    const raw = (request.query as { q?: unknown }).q;
    const q = typeof raw === 'string' ? raw.slice(0, MAX_SEARCH_LENGTH).trim() : '';
    const kept = takeFlash<Done>(request, reply, 'admin');
    return adminPage(request, reply, { q, ...(kept ? { notice: { kind: 'ok', text: kept.text }, ...(kept.invite ? { invite: kept.invite } : {}) } : {}) });
  });

  app.post('/admin/accounts/:id/plan', { config: { page: 'admin' }, preHandler: csrf }, async (request, reply) =>
    change(request, reply, async (id) => {
      const account: Account = await deps.accounts.setPlanById(id, field(request.body, 'plan', 50));
      return `the account ${account.email} is now on the ${account.plan} plan`;
    }),
  );

  app.post('/admin/accounts/:id/status', { config: { page: 'admin' }, preHandler: csrf }, async (request, reply) =>
    change(request, reply, async (id) => {
      const account = await deps.accounts.setStatusById(id, field(request.body, 'status', 20), request.viewer!.account.id);
      return account.status === 'suspended'
        ? `the account ${account.email} is suspended: its tokens are refused and it cannot sign in`
        : `the account ${account.email} is active again`;
    }),
  );

  app.post('/admin/invitations', { config: { page: 'admin' }, preHandler: csrf }, async (request, reply) => {
    const email = field(request.body, 'email', EMAIL_MAX_CHARS).trim();
    const plan = field(request.body, 'plan', 50);
    try {
      const { secret, link } = await deps.logins.invite(request.viewer!.account, { email, plan });
      // The secret is shown once, by the page the redirect leads to (never in a URL of ours, never
      // stored in the clear; every answer is no-store).
      const url = inviteLinkUrl(linkBase(request, deps.config), secret);
      return done(request, reply, '', {
        text: 'invitation created: send the link below to the person you invite',
        invite: { link: url, email: link.email, plan: link.plan ?? plan, expires_at: link.expires_at },
      });
    } catch (err) {
      return adminPage(request, reply, { q: '', notice: { kind: 'error', text: refusal(reply, err) }, form: { email, plan } });
    }
  });
}
