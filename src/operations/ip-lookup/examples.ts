import { ok, one, type OperationExamples } from '../shared/examples.js';

/** Google's public resolver, located: /ip/lookup-bulk and GET /ip/my-ip show it too. */
export const GOOGLE_DNS = {
  ip: '8.8.8.8',
  version: 4,
  type: 'public',
  hostname: null,
  location: {
    country: 'United States',
    country_code: 'US',
    region: null,
    city: null,
    postal_code: null,
    latitude: 37.751,
    longitude: -97.822,
    timezone: 'America/Chicago',
    isp: 'Google LLC',
  },
  asn: { number: 15169, organization: 'Google LLC', network: '8.8.8.0/24' },
};

export const ipLookupExamples: OperationExamples = {
  body: one('a public address', { ip: '8.8.8.8', detailed: false, security_check: false }),
  ok: ok(GOOGLE_DNS, 'address looked up'),
  invalid: { field: 'ip', message: 'ip: must be an IPv4 or IPv6 address' },
};
