import { ok, one, type OperationExamples } from '../shared/examples.js';

export const pingTcpExamples: OperationExamples = {
  body: one('four connects to port 443', { host: 'example.com', port: 443, count: 4, timeout: 2 }),
  ok: ok(
    {
      host: 'example.com',
      ip: '93.184.215.14',
      port: 443,
      sent: 4,
      received: 3,
      loss_percent: 25,
      min: 11.82,
      avg: 12.41,
      max: 13.2,
      mdev: 0.58,
      samples: [12.21, 11.82, null, 13.2],
      outcomes: ['connected', 'connected', 'timeout', 'connected'],
      error: null,
    },
    'example.com (93.184.215.14) port 443: 4 sent, 3 received, 25% loss',
  ),
  invalid: { field: 'count', message: 'count: must be between 1 and 20' },
};
