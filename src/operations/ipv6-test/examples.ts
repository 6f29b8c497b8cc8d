import { ok, one, type OperationExamples } from '../shared/examples.js';

export const ipv6TestExamples: OperationExamples = {
  body: one('a host name (443, then 80)', { target: 'example.com' }),
  ok: ok(
    {
      target: 'example.com',
      addresses: ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
      reachable: true,
      address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c',
      port: 443,
      response_time: 18.27,
      error: null,
    },
    'reachable over IPv6',
  ),
  invalid: { field: 'target', message: 'target: is required' },
};
