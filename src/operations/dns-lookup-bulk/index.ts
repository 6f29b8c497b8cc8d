import { Type } from 'typebox';
import { parseRecordType } from '../../domain/dns/index.js';
import { defineOperation } from '../operation.js';
import { dnsLookupBulkExamples } from './examples.js';
import { DnsBulkBody, DnsBulkItem } from './schema.js';
import { dnsLookupBulkView } from './view.js';

export const dnsLookupBulk = defineOperation({
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
  examples: dnsLookupBulkExamples,
  view: dnsLookupBulkView,
});
