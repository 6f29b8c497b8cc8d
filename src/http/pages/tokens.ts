import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError, ValidationError } from '../../errors.js';
import { MAX_LABEL_LENGTH } from '../../domain/accounts/service.js';
import type { Token } from '../../domain/accounts/repositories.js';
import type { PageDeps } from './deps.js';
import { field, linkBase, pageTime, refusal, render } from './render.js';
import { keepFlash, takeFlash } from './flash.js';

/** The expiries the form offers; `never` is a token without an expiry. */
export const TOKEN_EXPIRIES = ['30', '90', '365', 'never'] as const;
type Expiry = (typeof TOKEN_EXPIRIES)[number];
const DEFAULT_EXPIRY: Expiry = '90';
/** A form's label is read a little past its limit, so that a too-long one is refused rather than cut. */
const LABEL_READ_MAX = MAX_LABEL_LENGTH + 1;
/** A token id in a path: a positive integer that fits the store's ids. */
const ID_PATTERN = /^[1-9][0-9]{0,14}$/;

export type TokenStatus = 'active' | 'revoked' | 'expired';

export function tokenStatus(token: Token, now: number): TokenStatus {
  if (token.revoked_at !== null) return 'revoked';
  if (token.expires_at !== null && Date.parse(token.expires_at) <= now) return 'expired';
  return 'active';
}

/** What the list shows of a token: never its secret (only its first characters, as stored). */
interface TokenRow {
  id: number;
  label: string;
  prefix: string;
  created: string;
  createdIso: string;
  lastUsed: string | null;
  lastUsedIso: string | null;
  expires: string | null;
  expiresIso: string | null;
  status: TokenStatus;
}

function rowOf(token: Token, now: number): TokenRow {
  return {
    id: token.id,
    label: token.label,
    prefix: token.prefix ? `${token.prefix}…` : '(made before prefixes were kept)',
    created: pageTime(token.created_at),
    createdIso: token.created_at,
    lastUsed: token.last_used_at === null ? null : pageTime(token.last_used_at),
    lastUsedIso: token.last_used_at,
    expires: token.expires_at === null ? null : pageTime(token.expires_at, true),
    expiresIso: token.expires_at,
    status: tokenStatus(token, now),
  };
}

/** Newest first; active ones before the revoked and expired. */
function sortRows(rows: TokenRow[]): TokenRow[] {
  const rank = (r: TokenRow) => (r.status === 'active' ? 0 : 1);
  return rows.sort((a, b) => rank(a) - rank(b) || b.createdIso.localeCompare(a.createdIso) || b.id - a.id);
}

function expiryOf(value: string): Expiry {
  const found = TOKEN_EXPIRIES.find((e) => e === value);
  if (found === undefined) throw new ValidationError('expiry', 'choose 30, 90 or 365 days, or never');
  return found;
}

interface NewToken {
  token: string;
  label: string;
  expires: string | null;
  curl: string;
}

/** The tokens page: make one (shown once, on the page the POST's redirect leads to), list them, revoke one. */
export async function tokenPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  const csrf = app.csrfProtection;

  const tokensPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    data: { form?: { label: string; expiry: string }; error?: string; ok?: string; created?: NewToken; welcome?: boolean },
  ) => {
    const viewer = request.viewer!;
    const now = deps.now();
    const rows = sortRows((await deps.accounts.listTokensOf(viewer.account.id)).map((t) => rowOf(t, now)));
    const notice = data.error ? { kind: 'error' as const, text: data.error } : data.ok ? { kind: 'ok' as const, text: data.ok } : undefined;
    return render(request, reply, 'tokens.eta', {
      title: 'API tokens',
      nav: 'tokens',
      styles: ['tokens.css'],
      ...(notice ? { notice } : {}),
      rows,
      active: rows.filter((r) => r.status === 'active').length,
      form: data.form ?? { label: '', expiry: DEFAULT_EXPIRY },
      expiries: TOKEN_EXPIRIES,
      labelMax: MAX_LABEL_LENGTH,
      created: data.created ?? null,
      welcome: data.welcome ?? false,
      base: linkBase(request, deps.config),
    });
  };

  app.get('/tokens', async (request, reply) => {
    const query = request.query as { welcome?: unknown; revoked?: unknown };
    const kept = takeFlash<Omit<NewToken, 'curl'>>(request, reply, 'token');
    if (kept) {
      const curl = `curl -H "Authorization: Bearer ${kept.token}" ${linkBase(request, deps.config)}/api/user`;
      return tokensPage(request, reply, { ok: 'your new token is below', created: { ...kept, curl } });
    }
    let ok: string | undefined;
    if (typeof query.revoked === 'string' && ID_PATTERN.test(query.revoked)) {
      // Only a token of this account is named; any other id says just that a token was revoked.
      const id = Number(query.revoked);
      const token = (await deps.accounts.listTokensOf(request.viewer!.account.id)).find((t) => t.id === id);
      ok = token ? `the token ${token.label ? `“${token.label}” ` : ''}(${token.prefix ?? 'nd_'}…) is revoked: the API refuses it from now on` : undefined;
    }
    return tokensPage(request, reply, { welcome: query.welcome === '1', ...(ok ? { ok } : {}) });
  });

  app.post('/tokens', { preHandler: csrf }, async (request, reply) => {
    const viewer = request.viewer!;
    const label = field(request.body, 'label', LABEL_READ_MAX);
    const expiryRaw = field(request.body, 'expiry', 10);
    try {
      const expiry = expiryOf(expiryRaw);
      const issued = await deps.accounts.issueToken(viewer.account, label, expiry === 'never' ? undefined : Number(expiry));
      // Shown once, by the page the redirect leads to: a reload of that page makes no other token.
      keepFlash(request, reply, 'token', {
        token: issued.token,
        label: label.trim(),
        expires: issued.expires_at === null ? null : pageTime(issued.expires_at, true),
      } satisfies Omit<NewToken, 'curl'>);
      return reply.redirect('/tokens', 303);
    } catch (err) {
      return tokensPage(request, reply, { form: { label, expiry: expiryRaw }, error: refusal(reply, err) });
    }
  });

  app.post('/tokens/:id/revoke', { preHandler: csrf }, async (request, reply) => {
    const { id } = request.params as { id: string };
    try {
      // Another account's token is not found, exactly as an unknown one: nothing is touched or told.
      if (!ID_PATTERN.test(id)) throw new NotFoundError('not a token id');
      await deps.accounts.revokeOwnToken(request.viewer!.account.id, Number(id));
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      reply.code(404);
      return render(request, reply, 'error.eta', { title: 'No such token', status: 404, message: 'This account has no token with that id. It may have been removed; go back to the tokens page and reload it.', nav: 'tokens' });
    }
    return reply.redirect(`/tokens?revoked=${id}`, 303);
  });
}
