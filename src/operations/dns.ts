import { Type } from 'typebox';
import { normalizeDomain, parseRecordType } from '../domain/dns/index.js';
import { defineOperation } from './operation.js';
import { DnsBulkBody, DnsBulkItem, DnsLookupBody, DnsLookupResult, WhoisBody, WhoisResult } from '../http/schemas/dns.js';

export const dnsOperations = [
  defineOperation({
    path: '/dns/lookup',
    summary: 'Look up DNS records',
    tags: ['dns'],
    body: DnsLookupBody,
    data: DnsLookupResult,
    probe: false,
    // The name's 400, and the 403 of a blocked reverse zone, before a job's 202 as before the call's answer.
    precheck(deps, { domain, type }) {
      deps.dns.queryName(domain, parseRecordType(type));
    },
    async run(deps, { domain, type, dnssec }) {
      const result = await deps.dns.lookup(domain, type, { dnssec });
      const validated = result.authenticated === undefined ? '' : result.authenticated ? ', authenticated' : ', not authenticated';
      return { data: result, message: `${result.type} lookup: ${result.status}${validated}` };
    },
  }),
  defineOperation({
    path: '/dns/lookup-bulk',
    summary: 'Look up DNS records of up to 50 domains at once',
    tags: ['dns'],
    body: DnsBulkBody,
    data: Type.Array(DnsBulkItem),
    probe: false,
    items: ({ domains }) => domains.length,
    // Only the type: a bad entry is an item of the result, never the job's 400.
    precheck(_deps, { type }) {
      parseRecordType(type);
    },
    async run(deps, { domains, type, dnssec }, { onItem }) {
      const results = await deps.dns.lookupBulk(domains, type, onItem, { dnssec });
      const refused = results.filter((r) => 'error_code' in r).length;
      return { data: results, message: `${results.length} lookups${refused ? `, ${refused} invalid` : ''}` };
    },
  }),
  defineOperation({
    path: '/dns/whois',
    summary: 'Registration of a domain: RDAP, or WHOIS for TLDs without RDAP',
    tags: ['dns'],
    body: WhoisBody,
    data: WhoisResult,
    probe: true,
    precheck(_deps, { domain }) {
      normalizeDomain(domain, { field: 'domain', allowUnderscore: false, minLabels: 2 });
    },
    async run(deps, { domain }, { signal }) {
      const result = await deps.whois.lookup(domain, signal);
      const state = result.registered === null ? 'registration unknown' : result.registered ? 'registered' : 'not registered';
      return { data: result, message: `${result.domain}: ${state} (${result.source})` };
    },
  }),
];
