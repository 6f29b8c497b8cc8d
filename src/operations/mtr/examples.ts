import { ok, one, type OperationExamples } from '../shared/examples.js';

const quiet = { hostname: null, asn: null, organization: null, network: null };

export const mtrExamples: OperationExamples = {
  body: one('ten ICMP probes per hop', { target: 'example.com', packets: 10 }),
  ok: ok(
    {
      target: 'example.com',
      address: '93.184.215.14',
      protocol: 'icmp',
      hops: [
        { ttl: 1, address: '192.168.1.1', ...quiet, sent: 10, received: 10, loss_percent: 0, last: 0.41, best: 0.38, avg: 0.45, worst: 0.61, stdev: 0.07 },
        { ttl: 2, address: null, ...quiet, sent: 10, received: 0, loss_percent: 100, last: null, best: null, avg: null, worst: null, stdev: null },
        { ttl: 3, address: '93.184.215.14', hostname: null, asn: 15133, organization: 'EDGECAST', network: '93.184.215.0/24', sent: 10, received: 10, loss_percent: 0, last: 9.3, best: 9.1, avg: 9.42, worst: 10.2, stdev: 0.31 },
      ],
      error: null,
    },
    'example.com (93.184.215.14): 3 hops, 0% loss at the target',
  ),
  invalid: { field: 'packets', message: 'packets: must be between 1 and 16' },
};
