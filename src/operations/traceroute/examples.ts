import { ok, one, type OperationExamples } from '../shared/examples.js';

export const tracerouteExamples: OperationExamples = {
  body: one('ICMP probes, three per hop', { target: 'example.com', protocol: 'icmp', max_hops: 30, queries: 3 }),
  ok: ok(
    {
      target: 'example.com',
      address: '93.184.215.14',
      protocol: 'icmp',
      reached: true,
      hops: [
        { ttl: 1, address: '192.168.1.1', hostname: null, asn: null, organization: null, network: null, rtts: [0.512, 0.431, 0.45] },
        { ttl: 2, address: null, hostname: null, asn: null, organization: null, network: null, rtts: [null, null, null] },
        { ttl: 3, address: '198.51.100.7', hostname: 'core1.example.net', asn: 64500, organization: 'EXAMPLE-NET', network: '198.51.100.0/24', rtts: [5.1, null, 6.02] },
        { ttl: 4, address: '93.184.215.14', hostname: null, asn: 15133, organization: 'EDGECAST', network: '93.184.215.0/24', rtts: [9.3, 9.48, 9.25] },
      ],
      error: null,
    },
    'example.com (93.184.215.14) reached in 4 hops',
  ),
  invalid: { field: 'max_hops', message: 'max_hops: must be between 1 and 30' },
};
