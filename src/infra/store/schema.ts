import type { Generated } from 'kysely';
import type { UsageRow } from './store.js';

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

/** One row per account, UTC day and endpoint: the aggregate the store interface reads back as UsageRow. */
export type UsageDailyTable = UsageRow & { account_id: number };

export interface DatabaseSchema {
  accounts: AccountsTable;
  tokens: TokensTable;
  usage_daily: UsageDailyTable;
}
