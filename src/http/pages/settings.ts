import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../../errors.js';
import { MIN_PASSWORD_LENGTH } from '../../domain/accounts/passwords.js';
import { PREVIOUS_SECRET_MS } from '../../domain/webhooks/secrets.js';
import type { Session } from '../../domain/accounts/repositories.js';
import type { PageDeps } from './deps.js';
import { field, pageTime, refusal, render } from './render.js';
import { clearSessionCookie } from './session.js';
import { LOGIN_LIMITS, type Throttle } from './throttle.js';
import { clientKey } from '../plugins/auth.js';

/** A session's id as it appears in a form: the SHA-256 hex of its cookie's secret. */
const SESSION_ID_PATTERN = /^[0-9a-f]{64}$/;
/** The longest user agent the list shows when it recognises no browser in it. */
const AGENT_SHOWN_MAX = 40;

/** "Firefox on Linux" from a user agent; the start of it when no known browser is named. */
export function browserOf(userAgent: string): string {
  const ua = userAgent.trim();
  if (ua === '') return 'unknown';
  const browsers: Array<[RegExp, string]> = [
    [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
    [/\b(?:OPR|Opera)\//, 'Opera'],
    [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
    [/\bHeadlessChrome\//, 'Headless Chrome'],
    [/\b(?:Chrome|CriOS|Chromium)\//, 'Chrome'],
    // Safari says Version/x … Safari/y; two linear tests rather than one pattern with .* between.
    [/\bSafari\//, 'Safari'],
    [/^curl\//, 'curl'],
  ];
  const systems: Array<[RegExp, string]> = [
    [/\bAndroid\b/, 'Android'],
    [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
    [/\bWindows\b/, 'Windows'],
    [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
    [/\bCrOS\b/, 'ChromeOS'],
    [/\bLinux\b/, 'Linux'],
  ];
  const browser = browsers.find(([re]) => re.test(ua))?.[1];
  const system = systems.find(([re]) => re.test(ua))?.[1];
  if (browser) return system ? `${browser} on ${system}` : browser;
  return ua.length > AGENT_SHOWN_MAX ? `${ua.slice(0, AGENT_SHOWN_MAX)}…` : ua;
}

interface SessionRow {
  id: string;
  current: boolean;
  browser: string;
  userAgent: string;
  ip: string;
  created: string;
  createdIso: string;
  lastSeen: string;
  lastSeenIso: string;
}

function rowOf(session: Session, currentId: string): SessionRow {
  return {
    id: session.id,
    current: session.id === currentId,
    browser: browserOf(session.user_agent),
    userAgent: session.user_agent,
    ip: session.ip,
    created: pageTime(session.created_at),
    createdIso: session.created_at,
    lastSeen: pageTime(session.last_seen_at),
    lastSeenIso: session.last_seen_at,
  };
}

/** Notices after a POST-redirect-GET: fixed texts chosen by a word in the query, nothing echoed. */
const DONE: Record<string, string> = {
  'signed-out': 'that session is signed out',
  password: 'your password is changed, and every other session of this account is signed out',
  rotated: `the webhook signing secret is new; the previous one keeps signing deliveries for ${PREVIOUS_SECRET_MS / 3_600_000} hours, so receivers can switch without losing any`,
};

/** Settings: the password, the signed-in sessions, the webhook signing secret. */
export async function settingsPages(app: FastifyInstance, deps: PageDeps, throttle: Throttle): Promise<void> {
  const csrf = app.csrfProtection;

  const settingsPage = async (request: FastifyRequest, reply: FastifyReply, notice?: { kind: 'ok' | 'error'; text: string }) => {
    const { account, session } = request.viewer!;
    const now = deps.now();
    const [sessions, secret] = await Promise.all([deps.logins.sessions(account.id), deps.webhookSecrets.get(account.id)]);
    const rows = sessions.map((s) => rowOf(s, session.id));
    // This one first, then the most recently seen.
    rows.sort((a, b) => Number(b.current) - Number(a.current) || b.lastSeenIso.localeCompare(a.lastSeenIso));
    // The previous secret is worth a note while it still signs deliveries.
    const previousUntil = deps.webhookSecrets.previousValidUntil(secret, now);
    return render(request, reply, 'settings.eta', {
      title: 'Settings',
      nav: 'settings',
      styles: ['settings.css'],
      ...(notice ? { notice } : {}),
      min: MIN_PASSWORD_LENGTH,
      sessions: rows,
      others: rows.filter((r) => !r.current).length,
      webhook: {
        secret: secret.secret,
        created: pageTime(secret.created_at),
        createdIso: secret.created_at,
        previous: previousUntil ? { until: pageTime(previousUntil), untilIso: previousUntil, start: `${secret.previous_secret!.slice(0, 10)}…` } : null,
      },
    });
  };

  app.get('/settings', async (request, reply) => {
    const { done } = request.query as { done?: unknown };
    const text = typeof done === 'string' && Object.hasOwn(DONE, done) ? DONE[done] : undefined;
    return settingsPage(request, reply, text ? { kind: 'ok', text } : undefined);
  });

  app.post('/settings/password', { preHandler: csrf }, async (request, reply) => {
    const { account, session } = request.viewer!;
    const current = field(request.body, 'current_password', 1_024);
    const next = field(request.body, 'new_password', 1_024);
    const again = field(request.body, 'new_password_again', 1_024);
    try {
      await throttle.hashing(clientKey(request.ip), async () => {
        // A stolen session must not become a way to guess the password behind it.
        await throttle.attempt(`password-change:${account.id}`, LOGIN_LIMITS.perEmail, deps.now(), 'password change');
        if (next !== again) throw new ValidationError('new_password_again', 'the two new passwords differ');
        await deps.logins.changePassword(account, current, next, session.id);
      });
    } catch (err) {
      return settingsPage(request, reply, { kind: 'error', text: asSpoken(refusal(reply, err)) });
    }
    return reply.redirect('/settings?done=password', 303);
  });

  app.post('/settings/sessions/:id/revoke', { preHandler: csrf }, async (request, reply) => {
    const { account, session } = request.viewer!;
    const { id } = request.params as { id: string };
    // Another account's session (or no session) is left alone, and the answer is the same.
    if (SESSION_ID_PATTERN.test(id)) await deps.logins.revokeSession(account.id, id);
    if (id === session.id) {
      clearSessionCookie(request, reply);
      return reply.redirect('/login', 303);
    }
    return reply.redirect('/settings?done=signed-out', 303);
  });

  app.post('/settings/sessions/revoke-all', { preHandler: csrf }, async (request, reply) => {
    await deps.logins.logoutEverywhere(request.viewer!.account.id);
    clearSessionCookie(request, reply);
    return reply.redirect('/login', 303);
  });

  app.post('/settings/webhook-secret/rotate', { preHandler: csrf }, async (request, reply) => {
    await deps.webhookSecrets.rotate(request.viewer!.account.id);
    return reply.redirect('/settings?done=rotated', 303);
  });
}

/** The domain names its fields as the form does; the page says them as a person would. */
function asSpoken(message: string): string {
  return message
    .replace(/^current_password: /, 'Current password: ')
    .replace(/^new_password_again: /, 'New password, again: ')
    .replace(/^new_password: /, 'New password: ')
    .replace(/^password: /, 'New password: ');
}
