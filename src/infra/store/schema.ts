import type { Generated } from 'kysely';

/** Table shapes as Kysely sees them. Timestamps are ISO 8601 UTC strings in both backends. */

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  email: string;
  plan: string;
  status: string;
  created_at: string;
}

export interface TokensTable {
  id: Generated<number>;
  account_id: number;
  label: string;
  hash: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface UsageDailyTable {
  account_id: number;
  day: string;
  endpoint: string;
  requests: number;
  successful: number;
  failed: number;
  rate_limited: number;
  total_ms: number;
}

export interface DatabaseSchema {
  accounts: AccountsTable;
  tokens: TokensTable;
  usage_daily: UsageDailyTable;
}
