import { one, type OperationExamples } from '../shared/examples.js';

export const ipv6ValidateExamples: OperationExamples = {
  body: one('a public address', { ipv6: '2001:4860:4860::8888' }),
  ok: {
    'application/json': {
      valid: {
        summary: 'a valid address',
        value: {
          success: true,
          data: {
            ipv6: '2001:4860:4860::8888',
            valid: true,
            type: 'public',
            compressed: '2001:4860:4860::8888',
            expanded: '2001:4860:4860:0000:0000:0000:0000:8888',
            reason: null,
          },
          message: 'valid IPv6 address',
        },
      },
      invalid: {
        summary: 'not an address (still a 200)',
        value: {
          success: true,
          data: { ipv6: '2001:db8::g', valid: false, type: null, compressed: null, expanded: null, reason: "'g' is not a hexadecimal digit" },
          message: 'not a valid IPv6 address',
        },
      },
    },
  },
  invalid: { field: 'ipv6', message: 'ipv6: is required' },
};
