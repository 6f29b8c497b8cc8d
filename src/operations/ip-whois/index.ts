import { whoisQuery } from '../../domain/rdap/index.js';
import { defineOperation } from '../operation.js';
import { ipWhoisExamples } from './examples.js';
import { IpWhoisBody, IpWhoisResult } from './schema.js';

/** No view of its own: the dashboard shows its result with the generic view. */
export const ipWhois = defineOperation({
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
  examples: ipWhoisExamples,
});
