import { ok, one, type OperationExamples } from '../shared/examples.js';

export const ipv6ExpandExamples: OperationExamples = {
  body: one('a compressed address', { ipv6: '2001:4860:4860::8888' }),
  ok: ok(
    { ipv6: '2001:4860:4860::8888', expanded: '2001:4860:4860:0000:0000:0000:0000:8888', compressed: '2001:4860:4860::8888' },
    'address expanded',
  ),
  invalid: { field: 'ipv6', message: 'ipv6: is not a valid IPv6 address' },
};
