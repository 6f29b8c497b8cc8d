import { GOOGLE_DNS } from '../ip-lookup/examples.js';
import { ok, one, type OperationExamples } from '../shared/examples.js';

const GOOGLE_DNS_V6 = {
  ...GOOGLE_DNS,
  ip: '2001:4860:4860::8888',
  version: 6,
  asn: { number: 15169, organization: 'Google LLC', network: '2001:4860:4840::/42' },
};

export const ipLookupBulkExamples: OperationExamples = {
  body: one('IPv4, IPv6 and a typo', { ips: ['8.8.8.8', '2001:4860:4860::8888', '8.8.8.888'] }),
  ok: ok(
    [GOOGLE_DNS, GOOGLE_DNS_V6, { ip: '8.8.8.888', error: 'ips[2]: must be an IPv4 or IPv6 address', error_code: 'validation_error' }],
    '2 looked up, 1 invalid',
  ),
  invalid: { field: 'ips', message: 'ips: at most 100 entries' },
};
