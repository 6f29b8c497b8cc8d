import { Type } from 'typebox';
import { INVALID_IP_RULE, lookupBulk, lookupIp, parseLookupIp } from '../domain/ip/index.js';
import { ValidationError } from '../errors.js';
import { defineOperation } from './operation.js';
import { IpBulkBody, IpBulkItem, IpLookupBody, IpLookupResult } from '../http/schemas/ip.js';

export const ipOperations = [
  defineOperation({
    path: '/ip/lookup',
    summary: 'Geolocation, ISP/ASN and optional security analysis of an IP address',
    tags: ['ip'],
    body: IpLookupBody,
    data: IpLookupResult,
    probe: false,
    precheck(_deps, { ip }) {
      if (!parseLookupIp(ip)) throw new ValidationError('ip', INVALID_IP_RULE);
    },
    async run(deps, { ip, ...opts }) {
      return { data: await lookupIp(deps.ip, ip, opts), message: 'address looked up' };
    },
  }),
  defineOperation({
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
  }),
];
