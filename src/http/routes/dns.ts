import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { ok } from '../reply.js';
import { responses } from '../schemas/common.js';
import { DnsBulkBody, DnsLookupBody, DnsLookupResult, WhoisBody, WhoisResult } from '../schemas/dns.js';
import type { RouteDeps } from './deps.js';

export async function dnsRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.post(
    '/dns/lookup',
    { schema: { summary: 'Look up DNS records', tags: ['dns'], body: DnsLookupBody, response: responses(DnsLookupResult) } },
    async (request) => {
      const { domain, type } = request.body as Static<typeof DnsLookupBody>;
      const result = await deps.dns.lookup(domain, type);
      return ok(result, `${result.type} lookup: ${result.status}`);
    },
  );
  app.post(
    '/dns/lookup-bulk',
    { schema: { summary: 'Look up DNS records of up to 50 domains at once', tags: ['dns'], body: DnsBulkBody, response: responses(Type.Array(DnsLookupResult)) } },
    async (request) => {
      const { domains, type } = request.body as Static<typeof DnsBulkBody>;
      const results = await deps.dns.lookupBulk(domains, type);
      return ok(results, `${results.length} lookups`);
    },
  );
  app.post(
    '/dns/whois',
    { config: { probe: true }, schema: { summary: 'WHOIS of a domain, following registry referrals', tags: ['dns'], body: WhoisBody, response: responses(WhoisResult) } },
    async (request) => {
      const result = await deps.whois.lookup((request.body as Static<typeof WhoisBody>).domain);
      const state = result.registered === null ? 'registration unknown' : result.registered ? 'registered' : 'not registered';
      return ok(result, `${result.domain}: ${state}`);
    },
  );
}
