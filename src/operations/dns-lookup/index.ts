import { parseRecordType } from '../../domain/dns/index.js';
import { defineOperation } from '../operation.js';
import { dnsLookupExamples } from './examples.js';
import { DnsLookupBody, DnsLookupResult } from './schema.js';
import { dnsLookupView } from './view.js';

export const dnsLookup = defineOperation({
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
  examples: dnsLookupExamples,
  view: dnsLookupView,
});
