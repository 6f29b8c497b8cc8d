import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SignupMode } from './signup.js';
import { ConflictError, ForbiddenError, UnauthorizedError, ValidationError } from '../../errors.js';
import type { Account, AuthLink, Session } from './repositories.js';
import type { Store } from '../store.js';
import { DEFAULT_PLAN } from './plans.js';
import { ARGON2_HASHER, checkNewPassword, hashPassword, needsRehash, verifyPassword, type PasswordHasher } from './passwords.js';
import { AccountService, EMAIL_PATTERN, planOf, type Clock } from './service.js';
import { DAY_MS } from '../../lib/time.js';

/** A session lives this long after its last use... */
export const SESSION_IDLE_MS = 7 * DAY_MS;
/** ...and never longer than this after the login that made it. */
export const SESSION_MAX_MS = 30 * DAY_MS;
/** A session's last use is written at most this often (the expiry slides with it). */
export const SESSION_TOUCH_MS = 5 * 60_000;
/** Sessions are purged at most this often (at a login)... */
export const SESSION_PURGE_INTERVAL_MS = 3_600_000;
/** ...once they have been expired or revoked this long (the sessions list never shows them). */
export const SESSION_PURGE_AFTER_MS = DAY_MS;
/** A one-time link to set a password is good for a day; an invitation for a week. */
export const PASSWORD_LINK_MS = DAY_MS;
export const INVITE_LINK_MS = 7 * DAY_MS;
/** What a login keeps of the client, for the sessions list: bounded. */
const USER_AGENT_MAX = 200;

/** Random secrets for cookies and links: 32 bytes, base64url (43 characters). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** What the database keeps of a cookie's or a link's secret: the secret itself is never stored. */
export function secretId(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** The dashboard page a password link opens. */
export function passwordLinkUrl(base: string, secret: string): string {
  return `${base}/set-password?token=${secret}`;
}

/** The dashboard page an invitation opens. */
export function inviteLinkUrl(base: string, secret: string): string {
  return `${base}/signup?invite=${secret}`;
}

/** A session cookie or link secret as newSecret makes them; anything else is refused without a lookup. */
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface ClientMeta {
  ip: string;
  userAgent: string;
}

export interface SignedIn {
  /** The cookie's value: shown to the browser once, stored only as its hash. */
  secret: string;
  session: Session;
  account: Account;
  /** A device cookie entry for this account (see trustedDevice): this browser has signed in to it. */
  device: string;
}

/**
 * Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device Cookies"): a browser that
 * signed in to an account carries an entry `<account id>.<nonce>.<mac>`, signed with a key only
 * the server holds, so its sign-in attempts can be throttled by that entry alone while strangers
 * meet the account-wide lockout. The key is the account's stored password hash (secret, kept in
 * the database every instance reads, and new with every password change, which forgets every
 * device of the account). One cookie holds the entries of a few accounts, newest first.
 */
const DEVICE_ENTRY = /^([1-9][0-9]{0,15})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;
/** The longest entry DEVICE_ENTRY matches: an id of 16 digits, a nonce of 22 characters, a MAC of 43. */
const DEVICE_ENTRY_MAX_CHARS = 16 + 1 + 22 + 1 + 43;
export const DEVICE_ENTRIES_MAX = 4;
const DEVICE_SEPARATOR = '~';
/** The longest cookie DEVICE_ENTRIES_MAX entries make: a longer one is not read at all. */
const DEVICE_COOKIE_MAX_CHARS = DEVICE_ENTRIES_MAX * (DEVICE_ENTRY_MAX_CHARS + DEVICE_SEPARATOR.length);

function deviceMac(accountId: number, nonce: string, passwordHash: string): string {
  return createHmac('sha256', passwordHash).update(`netdiag device v1|${accountId}|${nonce}`).digest('base64url');
}

/** A cookie's well-formed entries (at most DEVICE_ENTRIES_MAX); anything else in it is ignored. */
function deviceEntries(cookie: string | undefined): Array<{ entry: string; accountId: number; nonce: string; mac: string }> {
  if (cookie === undefined || cookie.length > DEVICE_COOKIE_MAX_CHARS) return [];
  return cookie
    .split(DEVICE_SEPARATOR, DEVICE_ENTRIES_MAX)
    .map((entry) => ({ entry, m: DEVICE_ENTRY.exec(entry) }))
    .filter((e): e is { entry: string; m: RegExpExecArray } => e.m !== null)
    .map(({ entry, m }) => ({ entry, accountId: Number(m[1]), nonce: m[2]!, mac: m[3]! }));
}

/** The device cookie after a sign-in: its new entry first, the other accounts' entries after it. */
export function withDevice(cookie: string | undefined, signedIn: Pick<SignedIn, 'account' | 'device'>): string {
  const others = deviceEntries(cookie).filter((e) => e.accountId !== signedIn.account.id);
  return [signedIn.device, ...others.map((e) => e.entry)].slice(0, DEVICE_ENTRIES_MAX).join(DEVICE_SEPARATOR);
}

/**
 * The dashboard's accounts: passwords, sessions, one-time links and sign-up. Plain domain logic
 * over the store; the pages show its errors as forms with messages.
 */
export class LoginService {
  constructor(
    private readonly store: Store,
    private readonly accounts: AccountService,
    private readonly signup: SignupMode,
    private readonly clock: Clock = () => new Date(),
    /** Every password hash and check of the dashboard goes through it. */
    private readonly hasher: PasswordHasher = ARGON2_HASHER,
  ) {}

  get signupMode(): SignupMode {
    return this.signup;
  }

  private async startSession(account: Account, meta: ClientMeta, passwordHash: string): Promise<SignedIn> {
    const now = this.clock().getTime();
    const secret = newSecret();
    const session = await this.store.sessions.create({
      id: secretId(secret),
      account_id: account.id,
      created_at: new Date(now).toISOString(),
      last_seen_at: new Date(now).toISOString(),
      expires_at: new Date(now + SESSION_IDLE_MS).toISOString(),
      user_agent: meta.userAgent.slice(0, USER_AGENT_MAX),
      ip: meta.ip,
    });
    await this.purgeSessions(now);
    const nonce = randomBytes(16).toString('base64url');
    return { secret, session, account, device: `${account.id}.${nonce}.${deviceMac(account.id, nonce, passwordHash)}` };
  }

  /**
   * The device (`<account id>.<nonce>`) a device cookie proves for the account of `email`, or
   * undefined: no entry of the cookie names that account with a valid signature.
   */
  async trustedDevice(email: string, cookie: string | undefined): Promise<string | undefined> {
    const entries = deviceEntries(cookie);
    if (entries.length === 0) return undefined;
    const account = await this.store.accounts.findByEmail(email.trim().toLowerCase());
    const entry = account && entries.find((e) => e.accountId === account.id);
    if (!account || !entry) return undefined;
    const stored = await this.store.accounts.passwordHash(account.id);
    if (stored === null) return undefined;
    const expected = Buffer.from(deviceMac(account.id, entry.nonce, stored));
    const given = Buffer.from(entry.mac);
    return expected.length === given.length && timingSafeEqual(expected, given) ? `${account.id}.${entry.nonce}` : undefined;
  }

  private purgedAt = -Infinity;

  /**
   * Forgets sessions that expired or were revoked SESSION_PURGE_AFTER_MS ago, at most every
   * SESSION_PURGE_INTERVAL_MS, on a login: without it every login ever made stays a row. A failed
   * purge costs nothing but its retry at a later login.
   */
  private async purgeSessions(now: number): Promise<void> {
    if (now - this.purgedAt < SESSION_PURGE_INTERVAL_MS) return;
    this.purgedAt = now;
    await this.store.sessions.purge(new Date(now - SESSION_PURGE_AFTER_MS).toISOString()).catch(() => undefined);
  }

  /**
   * A new session for the right e-mail and password. Wrong e-mail and wrong password are one
   * answer and take as long (the hasher runs either way), so the form cannot be used to learn
   * which addresses have accounts.
   */
  async login(email: string, password: string, meta: ClientMeta): Promise<SignedIn> {
    const account = await this.store.accounts.findByEmail(email.trim().toLowerCase());
    const stored = account ? await this.store.accounts.passwordHash(account.id) : null;
    const ok = await verifyPassword(stored, password, this.hasher);
    if (!account || !ok || stored === null) throw new UnauthorizedError('the e-mail address or the password is wrong');
    if (account.status !== 'active') throw new ForbiddenError('this account is suspended; contact the operator of this service');
    let current = stored;
    if (needsRehash(stored)) {
      current = await hashPassword(password, this.hasher);
      await this.store.accounts.setPasswordHash(account.id, current);
    }
    return this.startSession(account, meta, current);
  }

  /**
   * The live session behind a cookie's secret, or undefined (unknown, revoked, expired, or its
   * account suspended). Its expiry slides forward, written at most every SESSION_TOUCH_MS.
   */
  async session(secret: string | undefined): Promise<{ session: Session; account: Account } | undefined> {
    if (secret === undefined || !SECRET_PATTERN.test(secret)) return undefined;
    const found = await this.store.sessions.find(secretId(secret));
    if (!found) return undefined;
    const { session, account } = found;
    const now = this.clock().getTime();
    if (session.revoked_at !== null || Date.parse(session.expires_at) <= now || account.status !== 'active') return undefined;
    if (now - Date.parse(session.last_seen_at) >= SESSION_TOUCH_MS) {
      const expires = Math.min(now + SESSION_IDLE_MS, Date.parse(session.created_at) + SESSION_MAX_MS);
      await this.store.sessions.touch(session.id, new Date(now).toISOString(), new Date(expires).toISOString());
    }
    return found;
  }

  async logout(sessionId: string): Promise<void> {
    await this.store.sessions.revoke(sessionId, this.clock().toISOString());
  }

  /** Signs the account out of every session, `exceptId` (the one asking) included unless named. */
  logoutEverywhere(accountId: number, exceptId?: string): Promise<number> {
    return this.store.sessions.revokeAll(accountId, this.clock().toISOString(), exceptId);
  }

  /** Revokes one session of this account; another account's is left alone. */
  async revokeSession(accountId: number, sessionId: string): Promise<void> {
    const found = await this.store.sessions.find(sessionId);
    if (found && found.session.account_id === accountId) await this.logout(sessionId);
  }

  sessions(accountId: number): Promise<Session[]> {
    return this.store.sessions.listActive(accountId, this.clock().toISOString());
  }

  /** Changes the password after checking the current one; every other session is signed out. */
  async changePassword(account: Account, current: string, next: string, keepSessionId: string): Promise<void> {
    const stored = await this.store.accounts.passwordHash(account.id);
    if (!(await verifyPassword(stored, current, this.hasher))) throw new ValidationError('current_password', 'is not the password of this account');
    checkNewPassword(next, 'new_password');
    await this.store.accounts.setPasswordHash(account.id, await hashPassword(next, this.hasher));
    await this.logoutEverywhere(account.id, keepSessionId);
  }

  /** A one-time link's secret that sets the account's password (first start, `account reset-password`). */
  async passwordLink(accountId: number): Promise<string> {
    const secret = newSecret();
    const now = this.clock().getTime();
    await this.store.authLinks.create({
      hash: secretId(secret),
      kind: 'password',
      account_id: accountId,
      email: null,
      plan: null,
      created_by: null,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + PASSWORD_LINK_MS).toISOString(),
    });
    return secret;
  }

  /** The unused, unexpired link of this kind behind a secret, or undefined. */
  async link(secret: string | undefined, kind: AuthLink['kind']): Promise<AuthLink | undefined> {
    if (secret === undefined || !SECRET_PATTERN.test(secret)) return undefined;
    const link = await this.store.authLinks.find(secretId(secret));
    if (!link || link.kind !== kind || link.used_at !== null || Date.parse(link.expires_at) <= this.clock().getTime()) return undefined;
    return link;
  }

  /** Sets the password through a one-time link (used up by this), signs out every session, and signs in. */
  async setPasswordWithLink(secret: string, password: string, meta: ClientMeta): Promise<SignedIn> {
    checkNewPassword(password);
    const link = await this.link(secret, 'password');
    if (!link || link.account_id === null) throw new ValidationError('link', 'this link has expired or was used already; ask for a new one');
    const account = await this.store.accounts.findById(link.account_id);
    if (!account) throw new ValidationError('link', 'the account of this link no longer exists');
    const hash = await hashPassword(password, this.hasher);
    if (!(await this.store.authLinks.consume(link.hash, this.clock().toISOString()))) {
      throw new ValidationError('link', 'this link has expired or was used already; ask for a new one');
    }
    await this.store.accounts.setPasswordHash(account.id, hash);
    await this.logoutEverywhere(account.id);
    if (account.status !== 'active') throw new ForbiddenError('the password is set, but this account is suspended; contact the operator of this service');
    return this.startSession(account, meta, hash);
  }

  /** An invitation link's secret; the new account gets `plan`, and `email` when the inviter named one. */
  async invite(by: Account, input: { email?: string; plan?: string }): Promise<{ secret: string; link: AuthLink }> {
    const email = input.email?.trim().toLowerCase() || null;
    if (email !== null && !EMAIL_PATTERN.test(email)) throw new ValidationError('email', 'must be an e-mail address like ops@example.com, or left empty');
    const secret = newSecret();
    const now = this.clock().getTime();
    const link = await this.store.authLinks.create({
      hash: secretId(secret),
      kind: 'invite',
      account_id: null,
      email,
      plan: planOf(input.plan ?? DEFAULT_PLAN),
      created_by: by.id,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + INVITE_LINK_MS).toISOString(),
    });
    return { secret, link };
  }

  invitations(limit: number): Promise<AuthLink[]> {
    return this.store.authLinks.listInvites(limit);
  }

  /**
   * A new account with a password, signed in. NETDIAG_SIGNUP decides: `open` lets anyone,
   * `invite` needs an unused invitation (whose e-mail, if it names one, must be the one given),
   * `closed` nobody. The invitation is used up by this.
   */
  async signUp(input: { email: string; name: string; password: string; invite?: string }, meta: ClientMeta): Promise<SignedIn> {
    const invite = input.invite ? await this.link(input.invite, 'invite') : undefined;
    if (input.invite && !invite) throw new ForbiddenError('this invitation has expired or was used already; ask for a new one');
    if (!invite && this.signup !== 'open') {
      throw new ForbiddenError(this.signup === 'invite' ? 'sign-up needs an invitation link from an administrator' : 'sign-up is closed on this server');
    }
    const email = input.email.trim().toLowerCase();
    if (invite?.email && invite.email !== email) throw new ValidationError('email', `this invitation is for ${invite.email}`);
    checkNewPassword(input.password);
    if (await this.store.accounts.findByEmail(email)) throw new ConflictError(`an account with ${email} exists already; log in, or reset its password`);
    const passwordHash = await hashPassword(input.password, this.hasher);
    if (invite && !(await this.store.authLinks.consume(invite.hash, this.clock().toISOString()))) {
      throw new ForbiddenError('this invitation has expired or was used already; ask for a new one');
    }
    let account: Account;
    try {
      // No token: a dashboard user makes their own, shown once, on the tokens page.
      account = await this.accounts.register({ email, name: input.name, plan: invite?.plan ?? DEFAULT_PLAN, passwordHash });
    } catch (err) {
      // Two sign-ups of one address at once: the unique index decides, the loser gets the 409.
      if (await this.store.accounts.findByEmail(email)) throw new ConflictError(`an account with ${email} exists already; log in, or reset its password`);
      throw err;
    }
    return this.startSession(account, meta, passwordHash);
  }
}
