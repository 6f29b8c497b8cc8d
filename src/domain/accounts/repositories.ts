/** Accounts, their API tokens, dashboard sessions and one-time links: the stores the account services use. */

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
  /** The token and its account for a hash, revoked or not; the caller decides. Called on every request. */
  findByHash(hash: string): Promise<{ token: Token; account: Account } | undefined>;
  findById(id: number): Promise<Token | undefined>;
  listByAccount(accountId: number): Promise<Token[]>;
  revoke(id: number, at: string): Promise<Token | undefined>;
  /** Records use at `at` (epoch ms); implementations may batch these writes, they are informational only. */
  touch(id: number, at: number): void;
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
