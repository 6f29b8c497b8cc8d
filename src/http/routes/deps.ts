import type { Config } from '../../config.js';
import type { AccountService } from '../../domain/accounts/service.js';

/** What the usage counters answer for GET /user. */
export interface UsageReader {
  callsToday(accountId: number): Promise<number>;
}

/** The collaborators routes call into; tests hand in real ones built on loopback. */
export interface RouteDeps {
  config: Config;
  accounts: AccountService;
  usage: UsageReader;
}
