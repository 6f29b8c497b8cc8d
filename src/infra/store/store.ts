/**
 * The store interface the domain talks to. SQLite implements it now; a PostgreSQL
 * implementation satisfies the same interface (and the same shared test suite) later.
 */

export type AccountStatus = 'active' | 'suspended';

export interface Account {
  id: number;
  name: string;
  email: string;
  plan: string;
  status: AccountStatus;
  created_at: string;
}

export interface Token {
  id: number;
  account_id: number;
  label: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface NewAccount {
  name: string;
  email: string;
  plan: string;
  created_at: string;
}

export interface AccountRepository {
  create(account: NewAccount): Promise<Account>;
  findById(id: number): Promise<Account | undefined>;
  findByEmail(email: string): Promise<Account | undefined>;
  list(): Promise<Account[]>;
  count(): Promise<number>;
  update(id: number, changes: Partial<Pick<Account, 'plan' | 'status' | 'name'>>): Promise<Account | undefined>;
}

export interface TokenRepository {
  create(token: { account_id: number; label: string; hash: string; created_at: string }): Promise<Token>;
  /** The token and its account for a hash, revoked or not; the caller decides. */
  findByHash(hash: string): Promise<{ token: Token; account: Account } | undefined>;
  findById(id: number): Promise<Token | undefined>;
  listByAccount(accountId: number): Promise<Token[]>;
  revoke(id: number, at: string): Promise<Token | undefined>;
  /** Records use; implementations may batch these writes, they are informational only. */
  touch(id: number, at: string): void;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  readonly accounts: AccountRepository;
  readonly tokens: TokenRepository;
  /** Throws when the database cannot answer; used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
