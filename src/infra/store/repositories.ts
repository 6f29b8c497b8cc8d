import type { Kysely } from 'kysely';
import { accountRepository } from './accounts.js';
import type { AuthCache } from './auth-cache.js';
import { authLinkRepository } from './auth-links.js';
import { kyselyJobs } from './jobs.js';
import { judgeRepository } from './judge.js';
import type { DatabaseSchema } from './schema.js';
import { sessionRepository } from './sessions.js';
import type { Store } from '../../domain/store.js';
import { tokenRepository, type TouchBuffer } from './tokens.js';
import { usageRepository } from './usage.js';
import { kyselyWebhookDeliveries } from './webhook-deliveries.js';
import { webhookSecretRepository } from './webhook-secrets.js';

export type Repositories = Omit<Store, 'kind' | 'ping' | 'onBackgroundError' | 'close'>;

/**
 * Every repository of a store, one implementation each on either backend: what differs is given
 * (the dialect, for the few statements that must differ; the authentication cache; the buffer of
 * tokens' last-used times).
 */
export function repositories(db: Kysely<DatabaseSchema>, dialect: Store['kind'], authCache: AuthCache, touches: TouchBuffer): Repositories {
  return {
    accounts: accountRepository(db, authCache),
    tokens: tokenRepository(db, authCache, touches),
    usage: usageRepository(db, dialect),
    judge: judgeRepository(db),
    sessions: sessionRepository(db),
    authLinks: authLinkRepository(db),
    webhookSecrets: webhookSecretRepository(db),
    jobs: kyselyJobs(db, dialect),
    webhookDeliveries: kyselyWebhookDeliveries(db),
  };
}
