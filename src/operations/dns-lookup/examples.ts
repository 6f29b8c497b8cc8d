import type { OperationExamples } from '../shared/examples.js';

/** An A lookup of example.com: /dns/lookup-bulk shows it too. */
export const DNS_A = {
  domain: 'example.com',
  type: 'A',
  status: 'NOERROR',
  records: [{ type: 'A', ttl: 3600, address: '93.184.215.14' }],
  resolver: '8.8.8.8',
  response_time: 12.84,
  cached: false,
};

/** An HTTPS lookup asked with the DO bit: the resolver validated it. */
const DNS_HTTPS = {
  domain: 'cloudflare.com',
  type: 'HTTPS',
  status: 'NOERROR',
  records: [
    {
      type: 'HTTPS',
      ttl: 300,
      priority: 1,
      target: '.',
      params: { alpn: 'h3,h2', ipv4hint: '104.16.132.229,104.16.133.229', ipv6hint: '2606:4700::6810:84e5,2606:4700::6810:85e5' },
    },
  ],
  resolver: '8.8.8.8',
  response_time: 18.4,
  cached: false,
  authenticated: true,
};

export const dnsLookupExamples: OperationExamples = {
  body: {
    example: { summary: 'A records of example.com', value: { domain: 'example.com', type: 'A' } },
    https_dnssec: { summary: 'HTTPS records, asked with DNSSEC', value: { domain: 'cloudflare.com', type: 'HTTPS', dnssec: true } },
  },
  ok: {
    'application/json': {
      success: { summary: 'success', value: { success: true, data: DNS_A, message: 'A lookup: NOERROR' } },
      https_dnssec: { summary: 'HTTPS with dnssec: true', value: { success: true, data: DNS_HTTPS, message: 'HTTPS lookup: NOERROR, authenticated' } },
    },
  },
  invalid: { field: 'domain', message: 'domain: is required' },
};
