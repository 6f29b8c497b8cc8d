export { DnsLookupService, type DnsBulkItem, type DnsEntryFailure, type DnsLookupDeps, type DnsLookupOptions, type DnsLookupResult } from './lookup.js';
export { ipLiteral, normalizeDomain, parseRecordType, queryName, reverseName, reversedLabels, type NormalizeOptions } from './names.js';
export { DNS_BULK_CONCURRENCY, DNS_BULK_MAX_DOMAINS, DNS_DEFAULT_TYPE, DNS_INPUT_MAX_CHARS } from './defaults.js';
