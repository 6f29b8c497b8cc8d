import type { Generated } from 'kysely';
import type { AuthLink, Session } from '../../domain/accounts/repositories.js';
import type { JobRecord } from '../../domain/jobs/repository.js';
import type { UsageRow } from '../../domain/usage/repository.js';
import type { NewWebhookDelivery, WebhookAttemptRecord, WebhookDeliveryState, WebhookSecret } from '../../domain/webhooks/repository.js';

/** Table shapes as Kysely sees them. Timestamps are ISO 8601 UTC strings in both backends. */

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  email: string;
  plan: string;
  status: string;
  created_at: string;
  password_hash: string | null;
  /** 0 or 1: SQLite has no boolean. */
  is_admin: Generated<number>;
}

export interface TokensTable {
  id: Generated<number>;
  account_id: number;
  label: string;
  hash: string;
  prefix: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  expires_at: string | null;
}

/** One row per account, UTC day and endpoint: the aggregate the store interface reads back as UsageRow. */
export type UsageDailyTable = UsageRow & { account_id: number };

/**
 * Calls (successful + failed) per account and UTC minute, kept for USAGE_MINUTES_KEEP_MS: the
 * record the rate limiter's minute and hour windows are rebuilt from after a restart.
 */
export interface UsageMinutesTable {
  account_id: number;
  /** Start of the UTC minute, epoch ms. */
  minute: number;
  calls: number;
}

/** One row per spent use of a judge nonce; kept until the nonce has expired, then purged. */
export interface JudgeNonceUsesTable {
  /** The nonce's random part, hex. */
  id: string;
  /** 'echo' | 'download' | 'upload' */
  kind: string;
  /** The nonce's expiry, epoch ms. */
  expires_at: number;
}

/** Secrets the instances sharing this database must agree on (the judge's signing secret). */
export interface SecretsTable {
  name: string;
  value: string;
  created_at: string;
}

/** A dashboard session as the store interface has it; `id` is the SHA-256 of the cookie's secret. */
export type SessionsTable = Session;

/** A one-time link (set a password, accept an invitation); `hash` is the SHA-256 of its secret. */
export type AuthLinksTable = Omit<AuthLink, 'kind'> & { kind: string };

export type WebhookSecretsTable = WebhookSecret;

/** A job's webhook event (as queued: webhook-deliveries.ts) and where its delivery stands. */
export type WebhookDeliveriesTable = NewWebhookDelivery & {
  id: Generated<number>;
  /** 'failed': given up. */
  state: Generated<WebhookDeliveryState>;
  attempts: Generated<number>;
  lease_owner: string | null;
  /** Epoch ms; the claim lapses then, and another instance may take the delivery. */
  lease_until: number | null;
  /** Epoch ms of its last claim: the account served longest ago goes first (migration 0011). */
  claimed_at: number | null;
};

export type WebhookAttemptsTable = WebhookAttemptRecord & { delivery_id: number };

/** A job (docs/jobs.md): its request, state, lease and outcome; JSON as text. */
export type JobsTable = Omit<JobRecord, 'status'> & { status: string };

/** A bulk or range job's items that completed together: seqs first_seq..last_seq (completion order, the SSE ids) as NDJSON lines (src/domain/jobs/items.ts). */
export interface JobItemBatchesTable {
  job_id: string;
  first_seq: number;
  last_seq: number;
  lines: string;
}

export interface DatabaseSchema {
  jobs: JobsTable;
  job_item_batches: JobItemBatchesTable;
  sessions: SessionsTable;
  auth_links: AuthLinksTable;
  webhook_secrets: WebhookSecretsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  accounts: AccountsTable;
  tokens: TokensTable;
  usage_daily: UsageDailyTable;
  usage_minutes: UsageMinutesTable;
  judge_nonce_uses: JudgeNonceUsesTable;
  secrets: SecretsTable;
}
