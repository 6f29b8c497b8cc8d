export { INVALID_IP_RULE, lookupBulk, lookupIp, parseLookupIp, scoreRisk } from './lookup.js';
export { checkDnsbl, checkTorExit, lookupPtr } from './dns-checks.js';
export * from './defaults.js';
export type {
  BlacklistResult,
  DnsQuerier,
  IpAsn,
  IpBulkItem,
  IpLocation,
  IpLookupDeps,
  IpLookupFailure,
  IpLookupOptions,
  IpLookupResult,
  SecurityReport,
} from './types.js';
