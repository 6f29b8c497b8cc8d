import type { AccountRepository, AuthLinkRepository, SessionRepository, TokenRepository } from './accounts/repositories.js';
import type { JobRepository } from './jobs/repository.js';
import type { JudgeRepository } from './proxy/judge-repository.js';
import type { UsageRepository } from './usage/repository.js';
import type { WebhookDeliveryRepository, WebhookSecretRepository } from './webhooks/repository.js';

/**
 * The store the domain talks to: one repository per area, each declared beside the area that
 * uses it. SQLite and PostgreSQL implement it, held to one shared test suite.
 */
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
