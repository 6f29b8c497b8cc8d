import { Type } from 'typebox';
import { INVALID_IP_RULE, lookupBulk, lookupIp, parseLookupIp } from '../domain/ip/index.js';
import { ValidationError } from '../errors.js';
import { defineOperation } from './operation.js';
import { IpBulkBody, IpBulkItem, IpLookupBody, IpLookupResult } from '../http/schemas/ip.js';
import { IpWhoisBody, IpWhoisResult } from '../http/schemas/ip-whois.js';
import { whoisQuery } from '../domain/rdap/index.js';

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
  defineOperation({
    path: '/ip/whois',
    summary: 'Registration of an IP network or AS number, from its RIR\'s RDAP service',
    tags: ['ip'],
    body: IpWhoisBody,
    data: IpWhoisResult,
    probe: true,
    precheck(_deps, body) {
      whoisQuery(body);
    },
    async run(deps, body, { signal }) {
      const query = whoisQuery(body);
      const result = 'ip' in query ? await deps.rdap.ip(query.ip, signal) : await deps.rdap.asn(query.asn, signal);
      const what = result.name ?? result.handle;
      return { data: result, message: result.error === null ? `${result.query}: ${what ?? 'registered'}` : `${result.query}: ${result.error}` };
    },
  }),
];
