import { ok, type OperationExamples } from '../shared/examples.js';

export const ipWhoisExamples: OperationExamples = {
  body: {
    ip: { summary: 'an IP address', value: { ip: '8.8.8.8' } },
    asn: { summary: 'an AS number', value: { asn: 'AS15169' } },
  },
  ok: ok(
    {
      query: '8.8.8.8',
      source: 'rdap',
      rdap_server: 'https://rdap.arin.net/registry/',
      handle: 'NET-8-8-8-0-2',
      name: 'GOGL',
      type: 'DIRECT ALLOCATION',
      country: null,
      start_address: '8.8.8.0',
      end_address: '8.8.8.255',
      cidr: ['8.8.8.0/24'],
      asn_range: null,
      registrant: 'Google LLC',
      abuse_email: 'network-abuse@google.com',
      created: '2023-12-28T22:24:33Z',
      updated: '2023-12-28T22:24:56Z',
      raw: '{"objectClassName":"ip network","handle":"NET-8-8-8-0-2",...}',
      hops: [{ server: 'https://rdap.arin.net/registry/ip/8.8.8.8', status: 'ok', error: null, bytes: 6231, response_time: 120.5 }],
      error: null,
    },
    '8.8.8.8: GOGL',
  ),
  invalid: { field: 'ip', message: 'ip: must be an IPv4 or IPv6 address (e.g. 8.8.8.8, 2001:4860::8888)' },
};
