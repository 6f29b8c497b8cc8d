import type { Config } from '../../config.js';
import type { AccountService } from '../../domain/accounts/service.js';
import type { UsageService } from '../../domain/usage/service.js';

/** The collaborators routes call into; tests hand in real ones built on loopback. */
export interface RouteDeps {
  config: Config;
  accounts: AccountService;
  usage: UsageService;
}
