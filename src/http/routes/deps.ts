import type { Config } from '../../config.js';
import type { AccountService } from '../../domain/accounts/service.js';
import type { UsageService } from '../../domain/usage/service.js';
import type { CheckedAddress } from '../../domain/dialer.js';
import type { Dialer } from '../../infra/net/dialer.js';
import type { DnsLookupService } from '../../domain/dns/index.js';
import type { WhoisService } from '../../domain/whois/index.js';
import type { PortScanner } from '../../domain/ports/index.js';
import type { ProxyChecker } from '../../domain/proxy/index.js';
import type { IpLookupDeps } from '../../domain/ip/index.js';
import type { JobService } from '../../domain/jobs/service.js';
import type { JobWebhooks } from '../../domain/jobs/types.js';

/** The collaborators routes call into; tests hand in real ones built on loopback. */
export interface RouteDeps {
  config: Config;
  accounts: AccountService;
  usage: UsageService;
  /** The one dialer every outbound probe uses (target policy, timeouts, socket budget). */
  dialer: Dialer;
  dns: DnsLookupService;
  whois: WhoisService<CheckedAddress>;
  /** One per server: its socket budget is shared by every scan. */
  ports: PortScanner;
  /** Proxy checks and the judge they are judged by (one per server: the judge's nonces live in it). */
  proxy: ProxyChecker;
  /** IP lookup's collaborators: the GeoIP reader, the DNS client and the DNSBL zones. */
  ip: IpLookupDeps;
  /** Jobs (Prefer: respond-async and /api/jobs); without it POST routes answer synchronously only. */
  jobs?: JobService;
  /** Webhook delivery: checks a job's webhook_url at creation; without it only its syntax is checked. */
  jobWebhooks?: JobWebhooks | undefined;
}
