import type { Config } from '../../config.js';
import type { AccountService } from '../../domain/accounts/service.js';
import type { UsageService } from '../../domain/usage/service.js';
import type { Dialer } from '../../infra/net/dialer.js';
import type { DnsLookupService } from '../../domain/dns/index.js';
import type { WhoisService } from '../../domain/whois/index.js';
import type { CheckedAddress } from '../../infra/net/dialer.js';

/** The collaborators routes call into; tests hand in real ones built on loopback. */
export interface RouteDeps {
  config: Config;
  accounts: AccountService;
  usage: UsageService;
  /** The one dialer every outbound probe uses (target policy, timeouts, socket budget). */
  dialer: Dialer;
  dns: DnsLookupService;
  whois: WhoisService<CheckedAddress>;
}
