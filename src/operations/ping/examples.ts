import { ok, one, type OperationExamples } from '../shared/examples.js';

export const pingExamples: OperationExamples = {
  body: one('four echo requests', { target: 'example.com', packets: 4 }),
  ok: ok(
    {
      target: 'example.com',
      address: '93.184.215.14',
      protocol: 'icmp',
      sent: 4,
      received: 3,
      loss_percent: 25,
      min: 11.82,
      avg: 12.411,
      max: 13.2,
      mdev: 0.585,
      samples: [{ seq: 1, ttl: 56, rtt: 12.21 }, { seq: 2, ttl: 56, rtt: 11.82 }, null, { seq: 4, ttl: 56, rtt: 13.2 }],
      error: null,
    },
    'example.com (93.184.215.14): 4 sent, 3 received, 25% loss',
  ),
  invalid: { field: 'packets', message: 'packets: must be between 1 and 16' },
};
