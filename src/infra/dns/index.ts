/** The DNS client: depend on the DnsClient interface; build one with createDnsClient(config). */
export { DnsCache, type DnsCacheOptions } from './cache.js';
export { StubResolver, createDnsClient, type StubResolverOptions } from './stub-resolver.js';
export { formatServer } from './transport.js';

