import { normalizeDomain } from '../../domain/dns/index.js';
import { defineOperation } from '../operation.js';
import { dnsWhoisExamples } from './examples.js';
import { WhoisBody, WhoisResult } from './schema.js';
import { dnsWhoisView } from './view.js';

export const dnsWhois = defineOperation({
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
  examples: dnsWhoisExamples,
  view: dnsWhoisView,
});
