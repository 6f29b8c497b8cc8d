import type { Config } from '../../config.js';
import type { AccountService } from '../../domain/accounts/service.js';
import type { LoginService } from '../../domain/accounts/logins.js';
import type { UsageService } from '../../domain/usage/service.js';
import type { WebhookSecrets } from '../../domain/webhooks/secrets.js';
import type { RateLimiter } from '../../domain/usage/rate-limit.js';
import type { UsageRepository } from '../../domain/usage/repository.js';
import type { JobService } from '../../domain/jobs/service.js';
import type { JobWebhooks } from '../../domain/jobs/types.js';
import type { JobStreams } from '../job-streams.js';
import type { CallOperation } from '../calls.js';

/** What the dashboard's pages call into: the same domain services as the API, never Fastify. */
export interface PageDeps {
  config: Config;
  accounts: AccountService;
  logins: LoginService;
  usage: UsageService;
  /** The recorded usage, for the windows when the app runs without a limiter. */
  usageRecords: UsageRepository;
  webhookSecrets: WebhookSecrets;
  /** The API's rate limiter: the windows the overview shows. null: none. */
  limiter: RateLimiter | null;
  /** Where the login throttle counts attempts: the API's limiter, or one of its own when that is null (src/compose.ts). */
  loginLimiter: RateLimiter;
  /** The job engine, for the jobs page; null leaves the page out. */
  jobs: JobService | null;
  /** Webhook attempts and "send again", for a job's page. */
  jobWebhooks: JobWebhooks | null;
  /** The job streams the API serves too: a job page's live progress. */
  streams: JobStreams | null;
  /** Checks: an operation called as a job of the signed-in account, through its route's steps. */
  calls: CallOperation | null;
  /** Epoch ms by the app's clock. */
  now: () => number;
}
