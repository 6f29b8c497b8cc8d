import { Type } from 'typebox';
import { lookupBulk } from '../../domain/ip/index.js';
import { defineOperation } from '../operation.js';
import { ipLookupBulkExamples } from './examples.js';
import { IpBulkBody, IpBulkItem } from './schema.js';
import { ipLookupBulkView } from './view.js';

export const ipLookupBulk = defineOperation({
  path: '/ip/lookup-bulk',
  summary: 'Look up to 100 addresses at once, in input order',
  tags: ['ip'],
  body: IpBulkBody,
  data: Type.Array(IpBulkItem),
  probe: false,
  items: ({ ips }) => ips.length,
  async run(deps, { ips, ...opts }, { onItem }) {
    const items = await lookupBulk(deps.ip, ips, opts, onItem);
    const failed = items.filter((i) => 'error' in i).length;
    return { data: items, message: `${items.length - failed} looked up${failed ? `, ${failed} invalid` : ''}` };
  },
  examples: ipLookupBulkExamples,
  view: ipLookupBulkView,
});
