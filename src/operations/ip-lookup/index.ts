import { INVALID_IP_RULE, lookupIp, parseLookupIp } from '../../domain/ip/index.js';
import { ValidationError } from '../../errors.js';
import { defineOperation } from '../operation.js';
import { ipLookupExamples } from './examples.js';
import { IpLookupBody, IpLookupResult } from './schema.js';
import { ipLookupView } from './view.js';

export const ipLookup = defineOperation({
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
  examples: ipLookupExamples,
  view: ipLookupView,
});
