import type { Config } from '../../config.js';
import type { AccountService } from '../../domain/accounts/service.js';
import type { UsageService } from '../../domain/usage/service.js';
import type { JobService } from '../../domain/jobs/service.js';
import type { JobWebhooks } from '../../domain/jobs/types.js';
import type { OperationDeps } from '../../operations/operation.js';

/** The collaborators routes call into (built once by src/compose.ts); tests hand in real ones built on loopback. */
export interface RouteDeps extends OperationDeps {
  config: Config;
  accounts: AccountService;
  usage: UsageService;
  /** Jobs (Prefer: respond-async and /api/jobs); without it POST routes answer synchronously only. */
  jobs?: JobService;
  /** Webhook delivery: checks a job's webhook_url at creation; without it only its syntax is checked. */
  jobWebhooks?: JobWebhooks | undefined;
}
