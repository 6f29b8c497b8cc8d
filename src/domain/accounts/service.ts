import { ForbiddenError, NotFoundError, UnauthorizedError, ValidationError } from '../../errors.js';
import type { Account, AccountStatus, Token } from './repositories.js';
import type { Store } from '../store.js';
import { DEFAULT_PLAN, PLAN_NAMES, type PlanName } from './plans.js';
import { canonicalOf } from '../../lib/canonical.js';
import { TOKEN_PATTERN, generateToken, hashToken, tokenPrefix } from './tokens.js';
import { DAY_MS } from '../../lib/time.js';
import { LRUCache } from 'lru-cache';

export type Clock = () => Date;

/** An e-mail address, loosely: one @ with something on each side, no spaces (mail is never sent). */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;

/** The longest e-mail address accepted (RFC 3696: 64 + 1 + 255). */
export const EMAIL_MAX_CHARS = 320;
export const MAX_NAME_LENGTH = 200;
export const MAX_LABEL_LENGTH = 200;
/** Active (neither revoked nor expired) tokens one account may hold: a bound on what one account can make the store keep. */
export const MAX_ACTIVE_TOKENS = 100;
/** The longest expiry a token may be given, in days (ten years). */
export const MAX_TOKEN_DAYS = 3_650;
/** The longest text an account search takes (the admin page's search box). */
export const MAX_SEARCH_LENGTH = 200;
/** The statuses an administrator may set. */
export const ACCOUNT_STATUSES: readonly AccountStatus[] = ['active', 'suspended'];
/**
 * Hashes of tokens the store did not know, remembered so that one presented again costs no
 * database read (a misconfigured script repeating a stale token, a guesser replaying its list).
 * At most this many, the least recently seen dropped first: ~1.5 MB at most.
 */
export const UNKNOWN_TOKEN_MEMO_MAX_ENTRIES = 10_000;
/**
 * How long a token is remembered as unknown. Tokens are made from 238 random bits, so one created
 * later is never one presented before; this bound only limits how long a token restored into the
 * database by other means (a backup) could be refused by this process.
 */
export const UNKNOWN_TOKEN_MEMO_TTL_MS = 5 * 60_000;

/** What every request of a suspended account is answered (403), and the error its cancelled jobs keep. */
export function suspendedError(email: string): ForbiddenError {
  return new ForbiddenError(`the account ${email} is suspended; contact the operator of this service`);
}

export interface Authenticated {
  account: Account;
  tokenId: number;
}

/**
 * The token of an `Authorization` value, or UnauthorizedError saying what is wrong with it. Every
 * spelling of one token (`Bearer` and any number of spaces, the scheme in any case) gives the
 * same token: memos on the request path are keyed by it, never by the header as sent.
 */
/**
 * The credential of an `Authorization: Bearer <credential>` header, or null when the header is
 * something else. RFC 9110: the scheme word is case-insensitive and 1*SP separates it.
 */
export function bearerCredential(authorization: string | undefined): string | null {
  if (!authorization) return null;
  return /^bearer +(\S+)$/i.exec(authorization)?.[1] ?? null;
}

export function bearerToken(authorization: string | undefined): string {
  if (!authorization) throw new UnauthorizedError();
  const token = bearerCredential(authorization);
  if (token === null) throw new UnauthorizedError('the Authorization header must be "Bearer <token>" with a single token');
  if (!TOKEN_PATTERN.test(token)) throw new UnauthorizedError('the API token is malformed: tokens look like nd_ followed by 40 letters and digits');
  return token;
}

function unknownToken(): UnauthorizedError {
  return new UnauthorizedError('the API token is not known');
}

/** A plan name in any case ("Free") as its canonical name, or the ValidationError listing them. */
export function planOf(name: string): PlanName {
  const plan = canonicalOf(PLAN_NAMES, name.trim());
  if (plan === undefined) throw new ValidationError('plan', `must be one of ${PLAN_NAMES.join(', ')}`);
  return plan;
}

/** Accounts and tokens: plain domain logic over the store interface. */
export class AccountService {
  /**
   * Hashes (never the tokens: no token text is kept in memory) the store answered "no such
   * token" for lately. Safe to answer from: a token is only ever added to the store by
   * issueToken, which makes it from fresh random bits (so no one presented it before; this
   * process also forgets its hash here, to need no such argument), and rows are never deleted.
   * A revoked or expired token is a row, so it is never here: its refusal comes from the store.
   */
  private readonly unknownHashes: LRUCache<string, true>;
  /**
   * Told the ids of the jobs a suspension cancelled, so that their runs in this process stop at
   * once and other processes are told as for a DELETE. Given at construction only: src/compose.ts
   * gives the job service's, `netdiag account suspend` a Redis publisher (cancelsPublished);
   * without it they stop at their next lease renewal.
   */
  private readonly onJobsCancelled: ((ids: readonly string[]) => Promise<void>) | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock = () => new Date(),
    opts: { onJobsCancelled?: (ids: readonly string[]) => Promise<void> } = {},
  ) {
    this.onJobsCancelled = opts.onJobsCancelled;
    // Aged by the service's clock, as everything else it dates.
    this.unknownHashes = new LRUCache({ max: UNKNOWN_TOKEN_MEMO_MAX_ENTRIES, ttl: UNKNOWN_TOKEN_MEMO_TTL_MS, ttlResolution: 0, perf: { now: () => this.clock().getTime() } });
  }

  private now(): string {
    return this.clock().toISOString();
  }

  async createAccount(input: { email: string; name: string; plan?: string; isAdmin?: boolean }): Promise<{ account: Account; token: string; tokenId: number }> {
    const account = await this.register(input);
    const { token, id } = await this.issueToken(account, 'default');
    return { account, token, tokenId: id };
  }

  /** A new account without a token (the dashboard's sign-up: its holder makes their own). */
  async register(input: { email: string; name: string; plan?: string; isAdmin?: boolean; passwordHash?: string }): Promise<Account> {
    const email = input.email.trim().toLowerCase();
    const name = input.name.trim();
    const plan = planOf(input.plan ?? DEFAULT_PLAN);
    if (!EMAIL_PATTERN.test(email)) throw new ValidationError('email', 'must be an e-mail address like ops@example.com');
    if (!name || name.length > MAX_NAME_LENGTH) throw new ValidationError('name', `must be 1-${MAX_NAME_LENGTH} characters`);
    if (await this.store.accounts.findByEmail(email)) throw new ValidationError('email', `an account with ${email} exists already`);
    return this.store.accounts.create({ email, name, plan, created_at: this.now(), is_admin: input.isAdmin ?? false, password_hash: input.passwordHash ?? null });
  }

  async accountByEmail(email: string): Promise<Account> {
    const account = await this.store.accounts.findByEmail(email.trim().toLowerCase());
    if (!account) throw new NotFoundError(`no account with e-mail ${email}`);
    return account;
  }

  listAccounts(): Promise<Account[]> {
    return this.store.accounts.list();
  }

  countAccounts(): Promise<number> {
    return this.store.accounts.count();
  }

  async setPlan(email: string, name: string): Promise<Account> {
    planOf(name); // a bad plan is named before an unknown e-mail, as before
    return this.setPlanById((await this.accountByEmail(email)).id, name);
  }

  async setStatus(email: string, status: 'active' | 'suspended'): Promise<Account> {
    return this.setStatusById((await this.accountByEmail(email)).id, status);
  }

  async accountById(id: number): Promise<Account> {
    const account = Number.isSafeInteger(id) && id > 0 ? await this.store.accounts.findById(id) : undefined;
    if (!account) throw new NotFoundError(`no account with id ${id}`);
    return account;
  }

  /**
   * Accounts whose e-mail or name contains `text` (any case; empty: every account), at most
   * `limit`, by id. The text is bounded to MAX_SEARCH_LENGTH characters.
   */
  searchAccounts(text: string, limit: number): Promise<Account[]> {
    return this.store.accounts.search(text.slice(0, MAX_SEARCH_LENGTH), Math.max(0, Math.floor(limit)));
  }

  /** `setPlan` by id (the admin page): an unknown id is NotFoundError, an unknown plan a ValidationError. */
  async setPlanById(id: number, name: string): Promise<Account> {
    const plan = planOf(name);
    const account = await this.accountById(id);
    return (await this.store.accounts.update(account.id, { plan })) ?? account;
  }

  /**
   * `setStatus` by id, on behalf of the account `byId` (the admin page): an account may not
   * suspend itself, so the last administrator cannot lock everyone out of the admin pages.
   */
  async setStatusById(id: number, status: string, byId?: number): Promise<Account> {
    const next = ACCOUNT_STATUSES.find((s) => s === status);
    if (next === undefined) throw new ValidationError('status', `must be one of ${ACCOUNT_STATUSES.join(', ')}`);
    const account = await this.accountById(id);
    if (next === 'suspended' && byId === account.id) {
      throw new ValidationError('status', 'you cannot suspend your own account; another administrator can, or the operator with `netdiag account suspend`');
    }
    const updated = (await this.store.accounts.update(account.id, { status: next })) ?? account;
    if (next === 'suspended') await this.stopWorkOf(updated);
    return updated;
  }

  /**
   * docs/jobs.md: a suspended account's queued and running jobs are cancelled at
   * once, their error the 403 body its requests get, and its pending webhook deliveries dropped; no
   * event is sent for the jobs cancelled. (The status is set first: no claim takes its jobs since.)
   */
  private async stopWorkOf(account: Account): Promise<void> {
    const at = this.now();
    const refusal = suspendedError(account.email);
    const error = JSON.stringify({ success: false, error: refusal.code, message: refusal.message });
    const ids = await this.store.jobs.cancelAccount(account.id, at, error);
    await this.store.webhookDeliveries.dropAccount(account.id, at, error);
    if (ids.length > 0) await this.onJobsCancelled?.(ids);
  }

  async createToken(email: string, label = '', expiresInDays?: number): Promise<{ token: string; id: number; expires_at: string | null }> {
    const account = await this.accountByEmail(email);
    return this.issueToken(account, label, expiresInDays);
  }

  /**
   * A new token of `account`: `expiresInDays` whole days from now (1..MAX_TOKEN_DAYS), or never.
   * The secret is returned once; only its hash is stored.
   */
  async issueToken(account: Account, label: string, expiresInDays?: number): Promise<{ token: string; id: number; expires_at: string | null }> {
    if (label.length > MAX_LABEL_LENGTH) throw new ValidationError('label', `must be at most ${MAX_LABEL_LENGTH} characters`);
    if (expiresInDays !== undefined && (!Number.isInteger(expiresInDays) || expiresInDays < 1 || expiresInDays > MAX_TOKEN_DAYS)) {
      throw new ValidationError('expires_in_days', `must be a whole number of days from 1 to ${MAX_TOKEN_DAYS}, or left out for a token that never expires`);
    }
    const now = this.clock();
    const active = (await this.store.tokens.listByAccount(account.id)).filter(
      (t) => t.revoked_at === null && (t.expires_at === null || Date.parse(t.expires_at) > now.getTime()),
    ).length;
    if (active >= MAX_ACTIVE_TOKENS) {
      throw new ValidationError('tokens', `an account may hold at most ${MAX_ACTIVE_TOKENS} active tokens; revoke one it no longer needs first`);
    }
    const token = generateToken();
    const hash = hashToken(token);
    this.unknownHashes.delete(hash);
    const expires_at = expiresInDays === undefined ? null : new Date(now.getTime() + expiresInDays * DAY_MS).toISOString();
    const row = await this.store.tokens.create({
      account_id: account.id,
      label: label.trim(),
      hash,
      prefix: tokenPrefix(token),
      created_at: now.toISOString(),
      expires_at,
    });
    return { token, id: row.id, expires_at };
  }

  /** Revokes a token of this account only; another account's token is NotFoundError, as an unknown one is. */
  revokeOwnToken(accountId: number, id: number): Promise<Token> {
    return this.revokeTokenOf(accountId, id);
  }

  /** Revokes the token `id` when it exists (and, with `accountId`, belongs to that account). */
  private async revokeTokenOf(accountId: number | undefined, id: number): Promise<Token> {
    const existing = await this.store.tokens.findById(id);
    if (!existing || (accountId !== undefined && existing.account_id !== accountId)) throw new NotFoundError(`no token with id ${id}`);
    return (await this.store.tokens.revoke(id, this.now())) ?? existing;
  }

  listTokensOf(accountId: number): Promise<Token[]> {
    return this.store.tokens.listByAccount(accountId);
  }

  /** Revokes any account's token (the operator's CLI); the dashboard uses revokeOwnToken. */
  revokeToken(id: number): Promise<Token> {
    return this.revokeTokenOf(undefined, id);
  }

  async listTokens(email: string): Promise<Token[]> {
    const account = await this.accountByEmail(email);
    return this.store.tokens.listByAccount(account.id);
  }

  /**
   * The account behind an `Authorization` header value. Missing, malformed, unknown or revoked
   * → UnauthorizedError; a suspended account → ForbiddenError. `now` (epoch ms, when the request
   * arrived) dates the token's last use; the service's clock does otherwise.
   */
  async authenticate(authorization: string | undefined, now?: number): Promise<Authenticated> {
    return this.verifyToken(bearerToken(authorization), now);
  }

  /** `authenticate` of a token already taken out of its header (`bearerToken`). */
  verifyToken(token: string, now?: number): Promise<Authenticated> {
    return this.verifyTokenHash(hashToken(token), now);
  }

  /**
   * `verifyToken` of a token's hash (`hashToken`): what a token is known by in memory, here and in
   * the callers' memos, never its text. A hash the store lately did not know is refused without
   * asking it again.
   */
  async verifyTokenHash(hash: string, now?: number): Promise<Authenticated> {
    if (this.unknownHashes.has(hash)) throw unknownToken();
    const found = await this.store.tokens.findByHash(hash);
    if (!found) this.unknownHashes.set(hash, true);
    return this.accept(found, now ?? this.clock().getTime());
  }

  /** The checks after the lookup. */
  private accept(found: { token: Token; account: Account } | undefined, now: number): Authenticated {
    if (!found) throw unknownToken();
    if (found.token.revoked_at !== null) throw new UnauthorizedError('the API token has been revoked');
    if (found.token.expires_at !== null && Date.parse(found.token.expires_at) <= now) {
      throw new UnauthorizedError(`the API token expired at ${found.token.expires_at}; create a new one on the dashboard`);
    }
    if (found.account.status !== 'active') {
      throw suspendedError(found.account.email);
    }
    this.store.tokens.touch(found.token.id, now);
    return { account: found.account, tokenId: found.token.id };
  }
}
