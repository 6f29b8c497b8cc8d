/**
 * The store interface the domain talks to. SQLite implements it now; a PostgreSQL
 * implementation satisfies the same interface (and the same shared test suite) later.
 */

import type { MaybePromise } from '../../maybe-promise.js';
import type { JobRepository } from './jobs.js';
import type { WebhookDeliveryRepository } from './webhook-deliveries.js';

/** Bound on cached authentication results, on either backend; the cache is simply dropped when full. */
export const AUTH_CACHE_MAX_ENTRIES = 10_000;

export type AccountStatus = 'active' | 'suspended';

export interface Account {
  id: number;
  name: string;
  email: string;
  plan: string;
  status: AccountStatus;
  created_at: string;
  /** May use the dashboard's admin pages (every account, invitations). */
  is_admin: boolean;
}

export interface Token {
  id: number;
  account_id: number;
  label: string;
  /** `nd_` + the token's first 6 characters (tokenPrefix); null for tokens made before it was stored. */
  prefix: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** After it the token is refused; null: never expires. */
  expires_at: string | null;
}

export interface NewAccount {
  name: string;
  email: string;
  plan: string;
  created_at: string;
  is_admin?: boolean;
  password_hash?: string | null;
}

export interface AccountRepository {
  create(account: NewAccount): Promise<Account>;
  findById(id: number): Promise<Account | undefined>;
  findByEmail(email: string): Promise<Account | undefined>;
  list(): Promise<Account[]>;
  count(): Promise<number>;
  update(id: number, changes: Partial<Pick<Account, 'plan' | 'status' | 'name' | 'is_admin'>>): Promise<Account | undefined>;
  /** Accounts whose e-mail or name contains `text` (any case), at most `limit`, by id. */
  search(text: string, limit: number): Promise<Account[]>;
  passwordHash(id: number): Promise<string | null>;
  setPasswordHash(id: number, hash: string): Promise<void>;
}

export interface TokenRepository {
  create(token: { account_id: number; label: string; hash: string; prefix?: string | null; created_at: string; expires_at?: string | null }): Promise<Token>;
  /**
   * The token and its account for a hash, revoked or not; the caller decides. Called on every
   * request: a store that caches may answer from memory without a promise.
   */
  findByHash(hash: string): MaybePromise<{ token: Token; account: Account } | undefined>;
  findById(id: number): Promise<Token | undefined>;
  listByAccount(accountId: number): Promise<Token[]>;
  revoke(id: number, at: string): Promise<Token | undefined>;
  /** Records use at `at` (epoch ms); implementations may batch these writes, they are informational only. */
  touch(id: number, at: number): void;
}

export type UsageOutcome = 'successful' | 'failed' | 'rate_limited';

/** One answered request, as usage analytics counts it. */
export interface UsageRecord {
  account_id: number;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  /** The route without the /api prefix, e.g. /ip/lookup. */
  endpoint: string;
  outcome: UsageOutcome;
  duration_ms: number;
  /**
   * When the request was admitted, epoch ms (the rate limiter's clock): its UTC minute is where
   * the call counts in the per-minute record that rebuilds the rate windows after a restart.
   * Without it the record counts in its day only.
   */
  at?: number;
}

/** Recorded calls (successful + failed) of an account in the calendar minute, hour and day of an instant. */
export interface WindowCounts {
  minute: number;
  hour: number;
  day: number;
}

/** The per account, day and endpoint aggregate that answers every usage question. */
export interface UsageRow {
  day: string;
  endpoint: string;
  requests: number;
  successful: number;
  failed: number;
  rate_limited: number;
  total_ms: number;
}

export interface UsageRepository {
  /** Adds the records in one transaction: all of them are durable when it resolves, or none. */
  record(records: readonly UsageRecord[]): Promise<void>;
  /** Rows for days fromDay..toDay inclusive, ordered by day then endpoint. */
  rows(accountId: number, fromDay: string, toDay: string): Promise<UsageRow[]>;
  /** Calls (successful + failed) of one day. */
  callsOn(accountId: number, day: string): Promise<number>;
  /**
   * Calls (successful + failed) in the UTC minute, hour and day of `now` (epoch ms): what the
   * rate limiter's windows are rebuilt from after a restart (its own, or Redis's).
   */
  windowCounts(accountId: number, now: number): Promise<WindowCounts>;
}

/** What a judge nonce may be used for, each at most once. */
export type NonceUse = 'echo' | 'download' | 'upload';

/**
 * The proxy judge's shared state: which uses of which nonces are spent, and the judge's signing
 * secret. It lives in the database so that every instance behind one judge URL agrees on both:
 * a nonce issued by one instance is accepted once by whichever instance the proxy reaches.
 */
export interface JudgeRepository {
  /**
   * The stored judge secret; `candidate` becomes it when no instance has stored one yet (the
   * first writer wins, every later caller reads the winner).
   */
  secret(candidate: string): Promise<string>;
  /** Spends one use of a nonce: true for exactly one caller on any connection, false ever after. */
  spend(id: string, use: NonceUse, expiresAt: number): Promise<boolean>;
  /** Spends whatever uses of these nonces are left (their checks ended). */
  spendAll(nonces: ReadonlyArray<{ id: string; expiresAt: number }>): Promise<void>;
  /** Forgets spent uses of nonces that expired at or before `before` (epoch ms); returns the rows removed. */
  purge(before: number): Promise<number>;
  /**
   * Records the judge URL an API instance serves (it replaces the one recorded before), for the
   * processes that serve none (`netdiag worker`) to send proxies to.
   */
  recordUrl(url: string): Promise<void>;
  /** The judge URL an API instance recorded last, or null when none ever did. */
  recordedUrl(): Promise<string | null>;
}

export interface Session {
  /** SHA-256 of the cookie's secret, hex. */
  id: string;
  account_id: number;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  user_agent: string;
  ip: string;
  revoked_at: string | null;
}

/**
 * Dashboard sessions, in the database so that every instance sees them and a revocation (sign
 * out, sign out everywhere) holds on all of them at the next request.
 */
export interface SessionRepository {
  create(session: Omit<Session, 'revoked_at'>): Promise<Session>;
  /** The session and its account, revoked or expired or not: the caller decides. */
  find(id: string): Promise<{ session: Session; account: Account } | undefined>;
  /** Slides the session's expiry forward. */
  touch(id: string, lastSeenAt: string, expiresAt: string): Promise<void>;
  revoke(id: string, at: string): Promise<void>;
  /** Revokes every live session of the account but `exceptId`; returns how many. */
  revokeAll(accountId: number, at: string, exceptId?: string): Promise<number>;
  /** Sessions neither revoked nor expired at `now` (ISO), newest first. */
  listActive(accountId: number, now: string): Promise<Session[]>;
  /** Forgets sessions that expired or were revoked before `before` (ISO); returns the rows removed. */
  purge(before: string): Promise<number>;
}

export type AuthLinkKind = 'password' | 'invite';

/** A one-time link: set an account's password, or sign up by invitation. */
export interface AuthLink {
  /** SHA-256 of the link's secret, hex. */
  hash: string;
  kind: AuthLinkKind;
  /** The account whose password it sets ('password'). */
  account_id: number | null;
  /** An invitation's address, when the inviter named one; the plan the new account gets. */
  email: string | null;
  plan: string | null;
  created_by: number | null;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface AuthLinkRepository {
  create(link: Omit<AuthLink, 'used_at'>): Promise<AuthLink>;
  find(hash: string): Promise<AuthLink | undefined>;
  /** Marks the link used: true for exactly one caller, and only while it is unused and unexpired at `at`. */
  consume(hash: string, at: string): Promise<boolean>;
  /** Invitations, newest first, at most `limit`. */
  listInvites(limit: number): Promise<AuthLink[]>;
}

export interface WebhookSecret {
  account_id: number;
  secret: string;
  created_at: string;
  /** The secret before the last rotation, which still signs until previous_until. */
  previous_secret: string | null;
  previous_until: string | null;
  /** The secret before that one, while it still signs (until older_until); absent when there is none. */
  older_secret?: string | null;
  older_until?: string | null;
}

export interface WebhookSecretRepository {
  /** The account's secret; `candidate` becomes it when it has none yet (the first writer wins). */
  get(accountId: number, candidate: { secret: string; created_at: string }): Promise<WebhookSecret>;
  /** Replaces the secret; the current one goes on signing until `previousUntil` (and nothing older does). */
  rotate(accountId: number, next: { secret: string; created_at: string }, previousUntil: string): Promise<WebhookSecret>;
  /**
   * The same, only while the current secret is still `opts.expected` (compare-and-set: null when
   * another rotation got there first); `opts.older` is kept signing beside the previous one.
   */
  rotate(
    accountId: number,
    next: { secret: string; created_at: string },
    previousUntil: string,
    opts: { expected: string; older: { secret: string; until: string } | null },
  ): Promise<WebhookSecret | null>;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  readonly accounts: AccountRepository;
  readonly tokens: TokenRepository;
  readonly usage: UsageRepository;
  readonly judge: JudgeRepository;
  readonly sessions: SessionRepository;
  readonly authLinks: AuthLinkRepository;
  readonly webhookSecrets: WebhookSecretRepository;
  readonly jobs: JobRepository;
  readonly webhookDeliveries: WebhookDeliveryRepository;
  /** Throws when the database cannot answer; used by /readyz. */
  ping(): Promise<void>;
  /**
   * Where failures of the store's own background writes go (the batched last-used times of
   * tokens). They are retried; this only makes them visible. Nothing is reported until set.
   */
  onBackgroundError(listener: (err: unknown) => void): void;
  close(): Promise<void>;
}
